import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { casesFor, ROUTE_COUNT, type FuzzCase } from './cases.js';
import { WIRE_DAMAGE, rawHttpTransport, type WireRequest } from './raw-http.js';
import { findingsReport, formatReport, runCases, unsoundLedger, type Finding, type RunStats } from './runner.js';
import { FUZZ_RUNS, FUZZ_SEED, HTTP_SHARE, mixOf } from './settings.js';
import { shuffled } from './shuffle.js';
import { seedWorld } from './world.js';

/**
 * The real-HTTP share of the fuzz suite (issue 11, point 2): the same generated cases,
 * sent as raw bytes over a socket to a spawned `tally serve` (the built CLI: run
 * `npm run build` first), most with damage only the wire can carry (duplicated, folded
 * or oversized headers, lying Content-Length, chunked bodies), so Node's own HTTP
 * parser sees them before Fastify. Same judgement as in-process: no 5xx or hang, the
 * error shape on every 4xx, nothing stored on refusal, healthy after.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0, env: { LOG_LEVEL: 'warn' } });
let logOffset = 0;
const drainLog = () => {
  const output = server.output();
  const lines = output
    .slice(logOffset)
    .split('\n')
    .filter((l) => l.trim() !== '');
  logOffset = output.length;
  return lines;
};
let stats: RunStats;

/** Wraps a case so its request is sent with one kind of wire damage (or none). */
function onTheWire(fuzzCase: FuzzCase, wire: (typeof WIRE_DAMAGE)[number]): FuzzCase {
  return { route: fuzzCase.route, how: `${fuzzCase.how}/wire:${wire}`, build: () => ({ ...fuzzCase.build(), wire }) as WireRequest };
}

describe(`fuzz (real HTTP to tally serve): seed ${FUZZ_SEED}`, () => {
  it('runs the generated cases', { timeout: 120_000 }, async () => {
    const transport = rawHttpTransport(server.url);
    const world = await seedWorld(transport, db.pool);
    const total = Math.max(1, Math.round(FUZZ_RUNS * HTTP_SHARE));
    const base = shuffled(casesFor(world, mixOf(total, ROUTE_COUNT), FUZZ_SEED + 7), FUZZ_SEED + 7);
    const wires = fc.sample(
      fc.oneof({ arbitrary: fc.constant('none' as const), weight: 1 }, { arbitrary: fc.constantFrom(...WIRE_DAMAGE), weight: 3 }),
      {
        seed: FUZZ_SEED + 8,
        numRuns: base.length,
      },
    );
    const cases = base.map((c, i) => onTheWire(c, wires[i]!));
    const started = Date.now();
    stats = await runCases(cases, transport, db.pool, { drainLog, timeoutMs: 10_000 });
    console.log(formatReport('fuzz (real HTTP)', stats, FUZZ_SEED, Date.now() - started));
    expect(stats.cases).toBe(cases.length);
  });

  const report = (kinds: Finding['kind'][]) => findingsReport(stats, kinds);

  it('answers no generated request with a 5xx, a hang or a crash', () => {
    expect(report(['status_5xx', 'hang', 'transport_error'])).toEqual([]);
  });

  it('answers every 4xx with {"error": {"code", "message"}} and nothing outside 2xx/4xx', () => {
    expect(report(['error_shape', 'unexpected_status'])).toEqual([]);
  });

  it('stores and bills nothing for a refused request', () => {
    expect(report(['stored_on_refusal'])).toEqual([]);
  });

  it('is healthy after, with a sound ledger, and the server still running', async () => {
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await unsoundLedger(db.pool)).toEqual({});
  });
});
