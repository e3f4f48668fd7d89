import { createServer, type Server } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { Client } from '../support/client.js';
import { runTally, startServer, waitUntil } from '../support/server.js';

/**
 * What `tally serve` and `tally demo --serve` say as they start (issue 37 item 8a, 8e): a
 * busy port is found before anything starts, named, with the option that chooses another;
 * the banner's first step is for an empty database only.
 */

const folders: string[] = [];
const holders: Server[] = [];
afterAll(async () => {
  await Promise.all(holders.map((h) => new Promise((resolve) => h.close(resolve))));
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
});

/** A port another program holds, on the address serve and the demo use. */
async function busyPort(): Promise<number> {
  const holder = createServer();
  holders.push(holder);
  await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return (holder.address() as { port: number }).port;
}

async function emptyFolder(name: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), name));
  folders.push(folder);
  return folder;
}

describe('a busy port', () => {
  it('stops tally serve before it starts the embedded database, naming the port and --port / PORT', async () => {
    const port = await busyPort();
    const parent = await emptyFolder('tally-busy-serve-');
    const dataDir = join(parent, 'data');
    const env = { DATABASE_URL: undefined, TALLY_ADMIN_TOKEN: undefined, TALLY_DATA_DIR: dataDir, HOST: '127.0.0.1' };
    for (const [how, args, extra] of [
      ['--port', ['serve', '--port', String(port)], {}],
      ['PORT', ['serve'], { PORT: String(port) }],
    ] as const) {
      const serve = runTally([...args], { ...env, ...extra });
      expect(await serve.exited, how).toBe(1);
      expect(serve.output(), how).toBe(`tally: port ${port} on 127.0.0.1 is already in use (by another tally serve, or another program): pass --port N (or set PORT) to use another\n`);
      // Nothing started: the embedded database would have made its data folder first.
      expect(existsSync(dataDir), how).toBe(false);
    }
  });

  it('stops tally demo --serve before its database and its run, naming the port and --port', async () => {
    const port = await busyPort();
    const temp = await emptyFolder('tally-busy-demo-');
    const demo = runTally(['demo', '--serve', '--port', String(port), '--jobs', '5'], { DATABASE_URL: undefined, TMPDIR: temp });
    expect(await demo.exited).toBe(1);
    expect(demo.output()).toBe(`tally: port ${port} on 127.0.0.1 is already in use (by another tally serve, or another program): pass --port N to use another\n`);
    // The demo keeps its database in a folder of the OS temp dir: none was made.
    expect(await readdir(temp)).toEqual([]);
  });
});

describe("serve's banner", () => {
  it('gives the first step on an empty database, and after a restart says what is there instead', async () => {
    const db = await freshDatabase();
    const first = await startServer(db.url, { workers: 0 });
    // The banner's last line follows 'Tally is ready' once serve has counted the tenants.
    await waitUntil(() => first.output().includes('First step, in another terminal'), 10_000);
    expect(first.output()).toMatch(/First step, in another terminal: TALLY_URL=http:\/\/127\.0\.0\.1:\d+ \.\/bin\/tally tenants create acme/);

    const admin = new Client(first.url);
    const tenant = await admin.post('/v1/tenants', { name: 'acme' });
    expect(tenant.status).toBe(201);
    expect((await admin.as(tenant.body.api_key).post('/v1/wallets', { currency: 'USD' })).status).toBe(201);
    expect((await admin.post('/v1/tenants', { name: 'globex' })).status).toBe(201);

    const second = await startServer(db.url, { workers: 0 });
    await waitUntil(() => second.output().includes('This database has'), 10_000);
    expect(second.output()).not.toContain('First step');
    expect(second.output()).toMatch(
      /This database has 2 tenants and 1 wallet: see them in the console, or TALLY_URL=http:\/\/127\.0\.0\.1:\d+ \.\/bin\/tally jobs list/,
    );
  });
});
