import cliProgress from 'cli-progress';

/**
 * Progress on stderr (stdout is the report): bars on a terminal, a line every few
 * seconds otherwise (CI logs, `2> file`).
 */
export interface Bars {
  update(values: Record<string, number>, rates?: Record<string, string>): void;
  stop(): void;
}

const LINE_EVERY_MS = 3000;

export function bars(title: string, totals: Record<string, number>): Bars {
  if (process.stderr.isTTY) {
    const multi = new cliProgress.MultiBar(
      { format: `${title} {label} [{bar}] {value}/{total} {rate}`, hideCursor: true, clearOnComplete: false, stream: process.stderr },
      cliProgress.Presets.shades_classic,
    );
    const byLabel = new Map(Object.entries(totals).map(([label, total]) => [label, multi.create(total, 0, { label: label.padEnd(10), rate: '' })]));
    return {
      update(values, rates = {}) {
        for (const [label, value] of Object.entries(values)) byLabel.get(label)?.update(value, { rate: rates[label] ?? '' });
      },
      stop: () => multi.stop(),
    };
  }
  let last = 0;
  let latest: Record<string, number> = {};
  let latestRates: Record<string, string> = {};
  const print = () =>
    process.stderr.write(
      `${title} ${Object.entries(totals).map(([label, total]) => `${label} ${latest[label] ?? 0}/${total}${latestRates[label] ? ` ${latestRates[label]}` : ''}`).join(' · ')}\n`,
    );
  return {
    update(values, rates = {}) {
      latest = { ...latest, ...values };
      latestRates = { ...latestRates, ...rates };
      if (Date.now() - last >= LINE_EVERY_MS) {
        last = Date.now();
        print();
      }
    },
    stop: print,
  };
}

export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}
