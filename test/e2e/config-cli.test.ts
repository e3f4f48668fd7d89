import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config/index.js';
import { TALLY_BIN } from '../support/server.js';

/**
 * Issue 24.7: `tally config` as an operator runs it — the built CLI, a real child process,
 * with nothing of the test's own environment but PATH and HOME.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function tally(args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, [TALLY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

const SECRETS = {
  DATABASE_URL: 'postgres://tally:pg-password-1@db.internal:5432,db2.internal:5433/tally?target_session_attrs=read-write',
  TALLY_ADMIN_TOKEN: 'admin-token-2',
  TALLY_METRICS_TOKEN: 'metrics-token-3',
  TALLY_API_KEY: 'tk_api-key-4',
  TALLY_SECRET_KEY: '5'.repeat(64),
};

describe('tally config', () => {
  it('prints every setting with its value and where it came from, secrets masked', async () => {
    const run = await tally(['config'], { ...SECRETS, PORT: '9123', TALLY_FAILPOINTS: 'worker.after_claim' });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(Object.keys(SETTINGS).length);
    for (const secret of ['pg-password-1', 'admin-token-2', 'metrics-token-3', 'api-key-4', '55555555'])
      expect(run.stdout).not.toContain(secret);
    const line = (name: string) => lines.find((l) => l.startsWith(`${name}=`));
    expect(line('DATABASE_URL')).toMatch(
      /^DATABASE_URL=postgres:\/\/tally:\*\*\*\*@db\.internal:5432,db2\.internal:5433\/tally\?target_session_attrs=read-write +# env$/,
    );
    expect(line('TALLY_ADMIN_TOKEN')).toMatch(/^TALLY_ADMIN_TOKEN=\*\*\*\*\(set\) +# env$/);
    expect(line('TALLY_SECRET_KEY')).toMatch(/^TALLY_SECRET_KEY=\*\*\*\*\(set\) +# env$/);
    expect(line('PORT')).toMatch(/^PORT=9123 +# env$/);
    expect(line('HOST')).toMatch(/^HOST=0\.0\.0\.0 +# default$/); // DATABASE_URL set
    expect(line('TALLY_DATA_DIR')).toMatch(/^TALLY_DATA_DIR=\.\/\.tally +# default$/);
    expect(line('TALLY_FAILPOINTS')).toMatch(/^TALLY_FAILPOINTS=worker\.after_claim +# env · test only$/);
  });

  it('--json: typed values, sources, secrets masked', async () => {
    const run = await tally(['config', '--json'], { ...SECRETS, TALLY_OUTBOUND_TIMEOUT_MS: '45000' });
    expect(run.code, run.stderr).toBe(0);
    const byName = Object.fromEntries(JSON.parse(run.stdout).settings.map((s: any) => [s.name, s]));
    expect(byName.DATABASE_URL).toMatchObject({ value: expect.stringContaining('tally:****@'), source: 'env', secret: true });
    expect(byName.TALLY_API_KEY).toMatchObject({ value: '****(set)', source: 'env', secret: true });
    expect(byName.PORT).toMatchObject({ value: 8080, source: 'default', default: '8080' });
    expect(byName.TALLY_OUTBOUND_LEASE_SECONDS).toMatchObject({ value: 90, source: 'default' });
    expect(run.stdout).not.toMatch(/pg-password-1|admin-token-2|metrics-token-3|api-key-4/);
  });

  it('an invalid setting: exit 1 and a sentence naming it, what was wrong and what is accepted', async () => {
    const run = await tally(['config'], { PORT: 'abc' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toBe("tally: PORT: 'abc' is not a port number (1-65535)");
  });

  it('every invalid setting at once, a refused secret not echoed', async () => {
    const run = await tally(['config', '--json'], { PORT: '0', LOG_LEVEL: 'chatty', TALLY_SECRET_KEY: 'short-secret' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('3 settings are invalid:');
    expect(run.stderr).toContain("PORT: '0' is not a port number (1-65535)");
    expect(run.stderr).toContain("LOG_LEVEL: 'chatty' is not one of fatal, error, warn, info, debug, trace, silent");
    expect(run.stderr).toContain(
      'TALLY_SECRET_KEY: the value given is not 32 random bytes as 64 hex characters or base64 (make one with `openssl rand -hex 32`)',
    );
    expect(run.stderr).not.toContain('short-secret');
  });

  it('a malformed destination list is refused too', async () => {
    const run = await tally(['config'], { TALLY_OUTBOUND_ALLOW: 'not a host!' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^tally: TALLY_OUTBOUND_ALLOW/);
  });

  it('serve refuses the same configuration at start, before touching a database', async () => {
    const run = await tally(['serve'], { PORT: 'abc', TALLY_DATA_DIR: '/nonexistent/never-created' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("tally: PORT: 'abc' is not a port number (1-65535)");
  });
});
