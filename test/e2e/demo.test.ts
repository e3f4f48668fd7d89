import { describe, expect, it } from 'vitest';
import { runTally } from '../support/server.js';

/**
 * `tally demo` as a first-time user runs it (issue 37 item 8b): the forgeries it sends on
 * purpose were one WARN 'webhook refused' line each, eighty of them reading as failures;
 * they are one summary line now, with the same count as the report's refused forgeries.
 * A refusal it did not ask for still shows (test/unit/demo-log.test.ts).
 */

describe('tally demo', () => {
  it('bills exactly, and summarises the refusals it provoked instead of logging each', { timeout: 300_000 }, async () => {
    // A seed whose 20 jobs send forgeries (drawn from the seed, so always the same ones).
    const demo = runTally(['demo', '--jobs', '20', '--seed', '7'], { DATABASE_URL: undefined });
    const code = await demo.exited;
    const output = demo.output();
    expect(code, output).toBe(0);
    expect(output).toContain('Billing is exact');
    // a job that grows twice, and one that runs out at max_limits and is cancelled (docs/long-running-jobs.md)
    expect(output).toMatch(/a job that grows: extensions\s+#1 \+0\.600000, #2 \+0\.600000\n/);
    expect(output).toMatch(/a job that runs out: hold_exhausted\s+max_limits, usage 1\.400000 of 1\.800000 held\n/);
    expect(output).toContain('Holds grew and ran out exactly as the contract says.');
    expect(output).not.toContain('webhook refused');
    const forgeries = Number(/forgeries refused \(401\)\s+(\d+)/.exec(output)?.[1]);
    expect(forgeries).toBeGreaterThan(0);
    expect(output).toContain(`  refused on purpose: ${forgeries} forged signature${forgeries === 1 ? '' : 's'} (counted here, not logged one by one)\n`);
  });
});
