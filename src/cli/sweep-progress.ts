import cliProgress from 'cli-progress';

/**
 * A long `tally grants expire`'s progress, on stderr (stdout is the answer), the way
 * reconcile-progress.ts shows a reconciliation's: silent for a run over within QUIET_MS;
 * past that, on a terminal a bar of the grants done out of those due when it started, and
 * otherwise (logs, a scheduler) a line every few seconds.
 */
const QUIET_MS = 1000;
const LINE_EVERY_MS = 3000;

export interface SweepProgress {
  /** one more grant done */
  tick(): void;
  stop(): void;
}

const count = (n: number) => n.toLocaleString('en-US');

export function sweepProgress(what: string, total: number, stream: NodeJS.WriteStream = process.stderr): SweepProgress {
  const started = Date.now();
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  let done = 0;

  if (stream.isTTY) {
    let bar: cliProgress.SingleBar | null = null;
    const timer = setInterval(() => {
      if (Date.now() - started < QUIET_MS) return;
      if (!bar) {
        bar = new cliProgress.SingleBar(
          { format: `${what} [{bar}] {value}/{total} · {elapsed} s`, hideCursor: true, clearOnComplete: true, stream },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, done, { elapsed: elapsed() });
      } else bar.update(done, { elapsed: elapsed() });
    }, 200);
    timer.unref();
    return {
      tick: () => void done++,
      stop() {
        clearInterval(timer);
        bar?.stop();
      },
    };
  }

  let lastLine = started;
  const timer = setInterval(() => {
    if (Date.now() - started < QUIET_MS || Date.now() - lastLine < LINE_EVERY_MS) return;
    lastLine = Date.now();
    stream.write(`${what}: ${count(done)}/${count(total)}; ${elapsed()} s so far\n`);
  }, 500);
  timer.unref();
  return {
    tick: () => void done++,
    stop() {
      clearInterval(timer);
      if (Date.now() - started >= QUIET_MS) stream.write(`${what}: ${count(done)}/${count(total)} in ${elapsed()} s\n`);
    },
  };
}
