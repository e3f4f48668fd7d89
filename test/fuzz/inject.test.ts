import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN } from '../support/server.js';
import { casesFor, ROUTE_COUNT } from './cases.js';
import { findingsReport, formatReport, runCases, unsoundLedger, type Finding, type RunStats } from './runner.js';
import { FUZZ_RUNS, FUZZ_SEED, HTTP_SHARE, mixOf } from './settings.js';
import { shuffled } from './shuffle.js';
import { injectTransport } from './transport.js';
import { seedWorld } from './world.js';

/**
 * Issue 11, point 2: generated bodies and headers (fast-check) at intake and at every
 * POST/PUT/PATCH route of the real app (buildApp on the test's real PostgreSQL, through
 * Fastify's inject). No answer is a 5xx or a hang; every 4xx is the error shape; a
 * refused request stores and bills nothing; the server is healthy and the ledger sound
 * after. The real-HTTP share of the suite is in http.test.ts.
 */
const db = await freshDatabase();
const serverLog: string[] = [];
let app: FastifyInstance;
let stats: RunStats;

beforeAll(async () => {
  app = await buildApp({ pool: db.pool, logLevel: 'silent', serverSecret: randomBytes(32), checkResponses: true, settings: { adminToken: ADMIN_TOKEN } });
  // The server's own record of a failure: the error and its stack, as it would log them.
  app.addHook('onError', async (request, _reply, error) => {
    serverLog.push(`${request.method} ${request.url.slice(0, 200)}: ${error.stack ?? String(error)}`.replace(/\n\s+/g, ' ⏎ '));
  });
  await app.ready();
});
afterAll(() => app?.close());

describe(`fuzz (in-process): seed ${FUZZ_SEED}`, () => {
  it('runs the generated cases', { timeout: 300_000 }, async () => {
    const world = await seedWorld(injectTransport(app), db.pool);
    const total = Math.round(FUZZ_RUNS * (1 - HTTP_SHARE));
    const cases = shuffled(casesFor(world, mixOf(total, ROUTE_COUNT), FUZZ_SEED), FUZZ_SEED);
    const started = Date.now();
    stats = await runCases(cases, injectTransport(app), db.pool, { drainLog: () => serverLog.splice(0) });
    console.log(formatReport('fuzz (in-process)', stats, FUZZ_SEED, Date.now() - started));
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

  it('is healthy after, with a sound ledger', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(await unsoundLedger(db.pool)).toEqual({});
  });
});
