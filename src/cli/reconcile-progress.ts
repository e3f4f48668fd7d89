import cliProgress from 'cli-progress';
import type { CheckProgress } from '../reconcile/checks.js';

/**
 * `tally reconcile`'s progress, on stderr (stdout is the run's answer, whose format
 * scripts rely on). Silent for a run that is over within QUIET_MS, so a quick run
 * prints what it always printed; past that: on a terminal, a bar of the checks done
 * with the one running, the rows it covers and the time so far; otherwise (logs, a
 * scheduler) one line per check done — the ones before the threshold too — and a line
 * every few seconds while one check runs long.
 */
const QUIET_MS = 1000;
const STILL_RUNNING_EVERY_MS = 3000;

export type RunProgress = CheckProgress & { pass: 'repair' | 'find' };

export interface ReconcileProgress {
  onCheck(progress: RunProgress): void;
  stop(): void;
}

const count = (n: number) => n.toLocaleString('en-US');
const passName = (p: RunProgress) => (p.pass === 'repair' ? 'before repairs' : 'checks');

export function reconcileProgress(stream: NodeJS.WriteStream = process.stderr): ReconcileProgress {
  const started = Date.now();
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  let current: RunProgress | null = null;
  let currentSince = 0;

  if (stream.isTTY) {
    let bar: cliProgress.SingleBar | null = null;
    const payload = (p: RunProgress) => ({ check: p.class, covers: `~${count(p.covers.rows)} ${p.covers.table}`, pass: passName(p), elapsed: elapsed() });
    const timer = setInterval(() => {
      if (!current || Date.now() - started < QUIET_MS) return;
      if (!bar) {
        bar = new cliProgress.SingleBar(
          { format: 'reconcile {pass} [{bar}] {value}/{total} · {check} over {covers} · {elapsed} s', hideCursor: true, clearOnComplete: true, stream },
          cliProgress.Presets.shades_classic,
        );
        bar.start(current.total, current.index - 1, payload(current));
      } else bar.update(payload(current));
    }, 200);
    timer.unref();
    return {
      onCheck(p) {
        if (p.phase === 'start') {
          current = p;
          if (bar && p.index === 1) bar.setTotal(p.total);
          bar?.update(p.index - 1, payload(p));
        } else bar?.update(p.index, payload(p));
      },
      stop() {
        clearInterval(timer);
        bar?.stop();
      },
    };
  }

  const held: string[] = [];
  const write = (line: string) => {
    if (Date.now() - started < QUIET_MS) held.push(line);
    else {
      for (const earlier of held.splice(0)) stream.write(`${earlier}\n`);
      stream.write(`${line}\n`);
    }
  };
  const timer = setInterval(() => {
    if (current && Date.now() - currentSince >= STILL_RUNNING_EVERY_MS) {
      write(`reconcile: ${current.class} running (${current.index}/${current.total} ${passName(current)}, over ~${count(current.covers.rows)} ${current.covers.table}); ${elapsed()} s so far`);
      currentSince = Date.now();
    }
  }, 500);
  timer.unref();
  return {
    onCheck(p) {
      if (p.phase === 'start') {
        current = p;
        currentSince = Date.now();
        return;
      }
      current = null;
      write(
        `reconcile: ${p.class} done in ${(p.seconds ?? 0).toFixed(2)} s (${p.index}/${p.total} ${passName(p)}, over ~${count(p.covers.rows)} ${p.covers.table}, ${p.found ?? 0} found); ${elapsed()} s so far`,
      );
    },
    stop() {
      clearInterval(timer);
      if (Date.now() - started >= QUIET_MS) for (const earlier of held.splice(0)) stream.write(`${earlier}\n`);
    },
  };
}
