import { readFile } from 'node:fs/promises';

/**
 * What Tally's own logs said during a failover — the lines an operator alerts on
 * (docs/operations/logs.md, high-availability.md): how many of each message each
 * process wrote within a window, and when the first and last came.
 */

/** The messages of a lost and found database, by who writes them. */
export const FAILOVER_MESSAGES = [
  'the database is unavailable; retry later',
  'lost the database; settling paused until it answers again',
  'the database does not answer yet',
  'database answers; settling resumed',
  'the database cannot be reached; the worker retries at each poll',
  'settlement failed; will retry',
] as const;

export interface MessageSeen {
  process: string;
  msg: string;
  count: number;
  first: number;
  last: number;
}

export async function messagesBetween(logs: { name: string; path: string }[], from: number, to: number): Promise<MessageSeen[]> {
  const seen = new Map<string, MessageSeen>();
  for (const { name, path } of logs) {
    const text = await readFile(path, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry: { time?: number; msg?: string };
      try {
        entry = JSON.parse(line) as { time?: number; msg?: string };
      } catch {
        continue;
      }
      const { time, msg } = entry;
      if (time === undefined || msg === undefined || time < from || time >= to) continue;
      if (!(FAILOVER_MESSAGES as readonly string[]).includes(msg)) continue;
      const key = `${name}\u0000${msg}`;
      const known = seen.get(key);
      if (known) {
        known.count++;
        known.last = time;
      } else seen.set(key, { process: name, msg, count: 1, first: time, last: time });
    }
  }
  return [...seen.values()].sort((a, b) => a.first - b.first);
}
