import { afterEach, describe, expect, it } from 'vitest';
import { Poller, type PollingLoop } from '../../src/queue/engine/index.js';

/**
 * The one polling runner of the queues' workers (settlement, outbound deliveries,
 * payments), on real timers. Every wait is for a condition the runner makes true; none
 * is a sleep standing in for one.
 */

/** Resolves once `condition` holds, looking at every turn of the event loop. */
async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const MINUTE = 60_000;
const warnings: { obj: object; msg?: string }[] = [];
const log = { warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }) };
const pollers: Poller[] = [];

function poller(pollIntervalMs: number): Poller {
  const made = new Poller({ pollIntervalMs, log });
  pollers.push(made);
  return made;
}

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
  warnings.length = 0;
});

describe('Poller', () => {
  it('follows a round that found work with the next at once, and waits the poll interval after one that found none', async () => {
    const ends: number[] = [];
    const starts: number[] = [];
    const found = [true, true, false];
    const runner = poller(100);
    runner.start([
      {
        failed: 'failed',
        round: async () => {
          starts.push(performance.now());
          const worked = found.shift() ?? false;
          ends.push(performance.now());
          return worked;
        },
      },
    ]);
    await until(() => starts.length >= 4, 'a round after the idle one');
    // Rounds 2 and 3 followed their finders at once; round 4 came after the poll interval.
    expect(starts[1]! - ends[0]!).toBeLessThan(50);
    expect(starts[2]! - ends[1]!).toBeLessThan(50);
    expect(starts[3]! - ends[2]!).toBeGreaterThanOrEqual(95);
  });

  it("logs a round that throws with its loop's sentence, waits as when idle, and goes on", async () => {
    let rounds = 0;
    const failure = new Error('the database is away');
    const runner = poller(20);
    runner.start([
      {
        failed: 'claiming things failed; retrying after the poll interval',
        round: async () => {
          rounds++;
          if (rounds === 1) throw failure;
          return false;
        },
      },
    ]);
    await until(() => rounds >= 2, 'the round after the failure');
    expect(warnings).toEqual([{ obj: { err: failure }, msg: 'claiming things failed; retrying after the poll interval' }]);
  });

  it('wakes one idle loop, not all of them', async () => {
    let rounds = 0;
    const runner = poller(MINUTE);
    const loop: PollingLoop = { failed: 'failed', round: async () => (rounds++, false) };
    runner.start([loop, loop, loop]);
    await until(() => rounds === 3, 'every loop found nothing once');
    runner.wakeOne();
    await until(() => rounds === 4, 'the woken loop looked again');
    // Stopping wakes the other two, which start no round: the count stays.
    await runner.stop();
    expect(rounds).toBe(4);
  });

  it('stops at once when every loop is idle, however long the poll interval', async () => {
    let rounds = 0;
    const runner = poller(MINUTE);
    runner.start([{ failed: 'failed', round: async () => (rounds++, false) }]);
    await until(() => rounds === 1, 'the first round');
    const started = performance.now();
    await runner.stop();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('on stop, waits for the round under way and starts no other', async () => {
    const inRound = gate();
    const release = gate();
    let rounds = 0;
    const runner = poller(MINUTE);
    runner.start([
      {
        failed: 'failed',
        round: async () => {
          rounds++;
          inRound.open();
          await release.opened;
          return true; // found work: without the stop, the next round would follow at once
        },
      },
    ]);
    await inRound.opened;
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    // Every pending callback runs before this one: the stop is still waiting for the round.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release.open();
    await stopping;
    expect(rounds).toBe(1);
  });
});
