import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settlementKey } from '../../src/lifecycle/index.js';
import { resolveException } from '../../src/reconcile/run.js';
import { freshDatabase } from '../support/database.js';
import { jobRow } from '../support/fixtures.js';
import { createWorld, deliver, drain, event, submitJob } from '../support/reconcile-world.js';
import { runTally } from '../support/server.js';

/**
 * `./bin/tally reconcile` and `./bin/tally import-usage` as real child processes (the
 * built CLI) against this file's database. The tests run in order on one database;
 * each leaves it clean for the next.
 */
const db = await freshDatabase({ max: 6 });
const dir = await mkdtemp(join(tmpdir(), 'tally-reconcile-cli-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function tally(...args: string[]): Promise<{ code: number | string; output: string }> {
  const proc = runTally(args, { DATABASE_URL: db.url });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

async function tallyJson(...args: string[]): Promise<{ code: number | string; run: any }> {
  const proc = runTally([...args, '--json'], { DATABASE_URL: db.url });
  let stdout = '';
  proc.child.stdout!.on('data', (chunk) => (stdout += chunk));
  const code = await proc.exited;
  let run: unknown;
  try {
    run = JSON.parse(stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${code}): ${proc.output()}`);
  }
  return { code, run };
}

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

describe('tally reconcile', () => {
  it('exits 0 on a clean database; --json prints the run', async () => {
    const plain = await tally('reconcile');
    expect(plain.code, plain.output).toBe(0);
    expect(plain.output).toMatch(/reconciliation [0-9a-f-]{36}: clean/);

    const json = await tallyJson('reconcile');
    expect(json.code).toBe(0);
    expect(json.run).toMatchObject({ clean: true, repair: false, exceptions: [], repairs: [] });
    const stored = await db.pool.query('select clean from reconciliation_runs where id = $1', [json.run.id]);
    expect(stored.rows).toEqual([{ clean: true }]);
  });

  it('exits 1 with an exception (an expired hold), names it, and finds the same exception again; --repair releases it and exits 0', async () => {
    const world = await createWorld(db.pool, { funds: 100_000n });
    const job = await submitJob(db.pool, world);
    await db.pool.query(`update holds set expires_at = now() - interval '1 minute' where job_id = $1`, [job.id]);

    const plain = await tally('reconcile');
    expect(plain.code, plain.output).toBe(1);
    expect(plain.output).toContain('hold_open_past_expiry');
    expect(plain.output).toContain(job.id);

    const first = await tallyJson('reconcile');
    const second = await tallyJson('reconcile');
    expect([first.code, second.code]).toEqual([1, 1]);
    expect(first.run.clean).toBe(false);
    expect(first.run.exceptions).toEqual([expect.objectContaining({ class: 'hold_open_past_expiry', objects: { job_id: job.id, wallet_id: world.wallet.id } })]);
    expect(second.run.exceptions.map((e: { id: string }) => e.id)).toEqual([first.run.exceptions[0].id]);

    const repaired = await tally('reconcile', '--repair');
    expect(repaired.code, repaired.output).toBe(0);
    expect(repaired.output).toContain(`repaired hold_open_past_expiry:${job.id}: release_hold`);
    expect(await jobRow(db.pool, job.id)).toMatchObject({ state: 'released', released: 8000n });
    const key = await db.pool.query('select settlement_key from settlements where job_id = $1', [job.id]);
    expect(key.rows).toEqual([{ settlement_key: settlementKey(world.tenantId, job.id, 'release', 1) }]);

    const again = await tallyJson('reconcile', '--repair');
    expect(again.code).toBe(0);
    expect(again.run).toMatchObject({ clean: true, repair: true, repairs: [] });
  });

  it('exits 2, not 1, when it cannot run at all (no database)', async () => {
    const proc = runTally(['reconcile'], { DATABASE_URL: 'postgres://tally:tally@127.0.0.1:1/nowhere' });
    const code = await proc.exited;
    expect(code, proc.output()).toBe(2);
    expect(proc.output()).toMatch(/the run failed/);
  });
});

describe('tally import-usage', () => {
  it('imports JSON lines; the same file again is already imported; reconciliation compares the records', async () => {
    const world = await createWorld(db.pool, { funds: 100_000n });
    const agreeing = await submitJob(db.pool, world, { ref: 'pj-json-a' });
    const differing = await submitJob(db.pool, world, { ref: 'pj-json-b' });
    await deliver(db.pool, world, event(world, agreeing, 'job.completed', { usage: { input_tokens: 300, output_tokens: 200 } }));
    await deliver(db.pool, world, event(world, differing, 'job.completed', { usage: { input_tokens: 100, output_tokens: 100 } }));
    await drain(db.pool);

    const path = await file(
      'usage.jsonl',
      [
        JSON.stringify({ provider: world.provider.name, provider_job_ref: 'pj-json-a', usage: { input_tokens: 300, output_tokens: 200 } }),
        '',
        JSON.stringify({ provider: world.provider.name, provider_job_ref: 'pj-json-b', usage: { input_tokens: 100, output_tokens: 150 } }),
        '',
      ].join('\n'),
    );
    const first = await tally('import-usage', path);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(/2 imported, 0 already imported/);
    const second = await tally('import-usage', path);
    expect(second.code, second.output).toBe(0);
    expect(second.output).toMatch(/0 imported, 2 already imported/);
    const stored = await db.pool.query('select provider_job_ref, usage from provider_usage where provider = $1 order by provider_job_ref', [world.provider.name]);
    expect(stored.rows).toEqual([
      { provider_job_ref: 'pj-json-a', usage: { input_tokens: 300, output_tokens: 200 } },
      { provider_job_ref: 'pj-json-b', usage: { input_tokens: 100, output_tokens: 150 } },
    ]);

    const run = await tallyJson('reconcile');
    expect(run.code).toBe(1);
    expect(run.run.exceptions).toEqual([
      expect.objectContaining({
        class: 'usage_mismatch',
        objects: { job_id: differing.id, provider: world.provider.name, provider_job_ref: 'pj-json-b' },
        detail: expect.objectContaining({ accepted: { input_tokens: 100, output_tokens: 100 }, provider_reported: { input_tokens: 100, output_tokens: 150 } }),
      }),
    ]);
    await resolveException(db.pool, run.run.exceptions[0].id, 'provider confirmed our numbers');
    const resolved = await tally('reconcile');
    expect(resolved.code, resolved.output).toBe(0);
    expect(resolved.output).toMatch(/clean \(1 reviewed exceptions\)/);
  });

  it('imports CSV (header provider,provider_job_ref,<dimensions>; a BOM and CRLF line ends as spreadsheets write them)', async () => {
    const world = await createWorld(db.pool, { funds: 100_000n });
    const job = await submitJob(db.pool, world, { ref: 'pj-csv-1' });
    await deliver(db.pool, world, event(world, job, 'job.completed', { usage: { input_tokens: 40, output_tokens: 7 } }));
    await drain(db.pool);
    const csv = `\uFEFFprovider,provider_job_ref,input_tokens,output_tokens\r\n${world.provider.name},pj-csv-1,40,7\r\n${world.provider.name},pj-csv-2,5,\r\n`;
    const path = await file('usage.csv', csv);

    const first = await tally('import-usage', path);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(/2 imported, 0 already imported/);
    const second = await tally('import-usage', path);
    expect(second.output).toMatch(/0 imported, 2 already imported/);
    const stored = await db.pool.query('select provider_job_ref, usage from provider_usage where provider = $1 order by provider_job_ref', [world.provider.name]);
    expect(stored.rows).toEqual([
      { provider_job_ref: 'pj-csv-1', usage: { input_tokens: 40, output_tokens: 7 } },
      { provider_job_ref: 'pj-csv-2', usage: { input_tokens: 5 } }, // an empty cell is no usage in that dimension
    ]);

    // pj-csv-1 agrees; pj-csv-2 is usage for a job Tally does not know
    const run = await tallyJson('reconcile');
    expect(run.code).toBe(1);
    expect(run.run.exceptions).toEqual([
      expect.objectContaining({ class: 'usage_mismatch', objects: { job_id: null, provider: world.provider.name, provider_job_ref: 'pj-csv-2' } }),
    ]);
    await resolveException(db.pool, run.run.exceptions[0].id, 'a test job run outside Tally');
    expect((await tally('reconcile')).code).toBe(0);
  });

  it('refuses an invalid file, naming the line, and imports nothing of it', async () => {
    const before = await db.pool.query('select count(*)::int as n from provider_usage');
    const bad = await file('bad.jsonl', `${JSON.stringify({ provider: 'p', provider_job_ref: 'r1', usage: { input_tokens: 1 } })}\n${JSON.stringify({ provider: 'p', provider_job_ref: 'r2', usage: { input_tokens: -1 } })}\n`);
    const result = await tally('import-usage', bad);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/line 2: usage/);
    const badCsv = await file('bad.csv', 'provider,provider_job_ref,input_tokens\np,r1,1.5\n');
    const csvResult = await tally('import-usage', badCsv);
    expect(csvResult.code).toBe(1);
    expect(csvResult.output).toMatch(/row 2: input_tokens must be a non-negative integer/);
    const missing = await tally('import-usage', join(dir, 'no-such-file.jsonl'));
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/no such file/);
    const after = await db.pool.query('select count(*)::int as n from provider_usage');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});
