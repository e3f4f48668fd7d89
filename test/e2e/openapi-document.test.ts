import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString, type OpenAPI3, type OperationObject } from 'openapi-typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/api/operation-ids.js';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, startServer } from '../support/server.js';
import { Client } from '../support/client.js';

/**
 * GET /openapi.json as a client meets it: valid to two independent validators, every
 * operation named and its security declared, and good enough to generate a typed client
 * that bills a job. examples/client/tally-api.d.ts is generated from this very document
 * (`npx vitest run test/e2e/openapi-document.test.ts -u` writes it again after an API
 * change); the example beside it is compiled with tsc and run against this server.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const GENERATED_HEADER =
  '// Generated from GET /openapi.json by openapi-typescript (test/e2e/openapi-document.test.ts): do not edit.\n' +
  '// After an API change: npx vitest run test/e2e/openapi-document.test.ts -u\n\n';

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1 });
const served = await fetch(`${server.url}/openapi.json`);
const text = await served.text();
const document = JSON.parse(text) as OpenAPI3;
/** A fresh copy for a tool that may change what it is given. */
const copy = <T = Record<string, unknown>>(): T => JSON.parse(text) as T;

const temporary: string[] = [];
afterAll(() => Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true }))));
async function temporaryDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
}

async function run(
  command: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, command, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

function operations(): ({ key: string } & OperationObject)[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = (item as Partial<Record<string, OperationObject>>)[method];
      return operation ? [{ key: `${method.toUpperCase()} ${path}`, ...operation }] : [];
    }),
  );
}

describe('GET /openapi.json', () => {
  it('is valid OpenAPI 3.1 to an independent validator (@seriousme/openapi-schema-validator)', async () => {
    expect(served.status).toBe(200);
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(copy());
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('passes `redocly lint` with no error and no warning (redocly.yaml says which rules are off, and why)', async () => {
    const file = join(await temporaryDir('tally-openapi-'), 'openapi.json');
    await writeFile(file, text);
    // No usage data and no update check: the run reaches no network.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const lint = await run(
      [REDOCLY, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000'],
      env,
    );
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(problems, lint.stderr).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.code).toBe(0);
  });

  it('names every operation once, from src/api/operation-ids.ts, and declares its security', () => {
    const table = Object.entries(OPERATIONS).map(([route, { id }]) => [route.replace(/:(\w+)/g, '{$1}'), id] as const);
    const listed = operations();
    expect(listed.length).toBeGreaterThanOrEqual(50);
    // Each operation has the table's name; the table names no route that is gone.
    expect(Object.fromEntries(listed.map((o) => [o.key, o.operationId]))).toEqual(Object.fromEntries(table));
    const ids = table.map(([, id]) => id);
    expect(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      'operationIds used twice',
    ).toEqual([]);
    for (const id of ids) expect(id, 'an operationId is a camelCase identifier').toMatch(/^[a-z][a-zA-Z0-9]*$/);
    for (const operation of listed) expect(operation.security, `${operation.key} declares its security`).toBeInstanceOf(Array);
    const open = listed.filter((o) => o.security!.length === 0).map((o) => o.key);
    expect(open.sort()).toEqual(['GET /', 'GET /healthz', 'GET /v1', 'POST /v1/payments/stripe/webhook', 'POST /v1/webhooks/{provider}']);
  });
});

describe('the typed client (examples/client)', () => {
  it('has types generated from this document: examples/client/tally-api.d.ts is current', async () => {
    const generated = GENERATED_HEADER + astToString(await openapiTS(copy<OpenAPI3>()));
    await expect(generated).toMatchFileSnapshot(
      '../../examples/client/tally-api.d.ts',
      'the API changed: regenerate with -u (see the file header)',
    );
  });

  it('compiles the quickstart example with tsc, and it bills a job against a running server', async () => {
    // Compiled outside the checkout; the packages it imports resolve through a link.
    const out = await temporaryDir('tally-client-');
    await symlink(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
    await writeFile(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
    const compiled = await run([TSC, '-p', 'examples/client', '--outDir', out]);
    expect(compiled.code, `tsc -p examples/client:\n${compiled.stdout}${compiled.stderr}`).toBe(0);

    const example = await run([join(out, 'quickstart.js')], { ...process.env, TALLY_URL: server.url, TALLY_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(example.code, `quickstart.js:\n${example.stdout}${example.stderr}`).toBe(0);
    expect(example.stdout).toMatch(/: reserved, 0\.060000 reserved$/m);
    expect(example.stdout).toMatch(/^webhook msg_\S+: accepted$/m);
    expect(example.stdout).toMatch(/: captured 0\.008700, released 0\.051300$/m);
    expect(example.stdout).toMatch(/^balance 9\.991300 USD$/m);

    // What it printed is what the server holds.
    const walletId = /^wallet (\S+) of tenant/m.exec(example.stdout)![1]!;
    const wallet = await new Client(server.url).get(`/v1/wallets/${walletId}`);
    expect(wallet.body).toMatchObject({ balance: '9.991300', reserved: '0.000000', available: '9.991300' });
  });
});
