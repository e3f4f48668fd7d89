import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The whole-service simulation (issue 36, sim/), in `npm test`: a few seeds of a few hundred
 * operations, one of them with faults, must agree with the reference model throughout; and
 * each planted bug must be caught by its regression seed (a run with a plant exits 1, naming
 * the step). Every run starts its own PostgreSQL (embedded, or DATABASE_URL's server),
 * `tally serve` and two `tally worker`s.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SIM = fileURLToPath(new URL('../../dist/sim/main.js', import.meta.url));

async function sim(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [SIM, ...args], { cwd: ROOT, env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

/** Seeds found to fail once (with the defect they found, fixed since): they run in every `npm test`. */
const REGRESSION_SEEDS: { seed: number; steps: number; faults: boolean; found: string }[] = [
  {
    seed: 1,
    steps: 300,
    faults: false,
    found: 'a discarded dead completion left its job usage_pending for good (test/e2e/discard-usage-pending.test.ts)',
  },
];

/** Each plant with a seed whose run catches it (sim/README.md lists the step). */
const PLANTED: { plant: string; seed: number; steps: number }[] = [
  { plant: 'release_forgets_share', seed: 3, steps: 400 },
  { plant: 'expiry_posted_twice', seed: 3, steps: 400 },
  { plant: 'extension_not_counted', seed: 3, steps: 400 },
  { plant: 'recharge_outside_wallet_lock', seed: 3, steps: 400 },
];

describe('npm run sim', () => {
  it('lists its plants, one a line', async () => {
    const run = await sim(['--list-plants']);
    expect(run.code).toBe(0);
    expect(run.output.trim().split('\n')).toEqual(PLANTED.map((p) => p.plant));
  });

  // seed 3 clean too: the plants' seed, so that what catches a plant is the plant
  for (const { seed, steps, faults } of [
    { seed: 2, steps: 150, faults: true },
    { seed: 3, steps: 400, faults: false },
    ...REGRESSION_SEEDS,
  ]) {
    it(
      `seed ${seed}${faults ? ' with faults' : ''}: Tally and the model agree at every quiescent point`,
      { timeout: 600_000 },
      async () => {
        const run = await sim(['--seed', String(seed), '--steps', String(steps), ...(faults ? ['--faults'] : [])]);
        expect(run.code, run.output).toBe(0);
        expect(run.output).toMatch(/all agreeing/);
      },
    );
  }

  for (const { plant, seed, steps } of PLANTED) {
    it(`catches the planted bug ${plant} (seed ${seed})`, { timeout: 600_000 }, async () => {
      const run = await sim(['--seed', String(seed), '--steps', String(steps), '--plant', plant]);
      expect(run.code, run.output).toBe(1);
      expect(run.output).toMatch(/DISAGREEMENT at step \d+ of seed/);
      expect(run.output).toContain(`replay: npm run sim -- --seed ${seed} --steps ${steps}`);
    });
  }
});
