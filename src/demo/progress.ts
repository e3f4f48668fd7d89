import cliProgress from 'cli-progress';

/** A progress bar on a terminal; plain periodic lines when output is piped (CI logs). */
export function progressBar(label: string, total: number): { increment(n?: number): void; update(value: number): void; stop(): void } {
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${label.padEnd(22)} [{bar}] {value}/{total}`, hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    return { increment: (n = 1) => bar.increment(n), update: (v) => bar.update(v), stop: () => bar.stop() };
  }
  let value = 0;
  let lastPrinted = -1;
  const print = () => {
    const decile = total === 0 ? 10 : Math.floor((value / total) * 10);
    if (decile !== lastPrinted) {
      lastPrinted = decile;
      console.log(`${label}: ${value}/${total}`);
    }
  };
  print();
  return {
    increment: (n = 1) => {
      value += n;
      print();
    },
    update: (v) => {
      value = v;
      print();
    },
    stop: () => {},
  };
}
