import { ConnectionLost, mapDatabaseError } from '../db/errors.js';
import type { WorkerOptions } from '../worker/worker.js';

type Log = WorkerOptions['log'];

/**
 * Whether an error only says the database cannot be reached (refused, reset, timed out,
 * shutting down): expected while a server restarts, and worth one line, never a stack.
 */
export function isConnectionFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (mapDatabaseError(e) instanceof ConnectionLost) return true;
    if (/timeout exceeded when trying to connect/i.test(e.message)) return true;
  }
  return false;
}

export function reasonOf(error: unknown): string {
  const e = error as (Error & { code?: string; errors?: Error[] }) | undefined;
  // Node's AggregateError (every address of localhost refused) has an empty message.
  return e?.message || e?.errors?.[0]?.message || e?.code || String(error);
}

/**
 * The worker's log with connection failures taken out: each goes to `onFailure`
 * instead (which pauses the worker and says so once). Everything else passes through.
 */
export function divertConnectionFailures(log: Log, onFailure: (error: unknown, during: string | undefined) => void): Log {
  const divert = (level: 'warn' | 'error') => (obj: object, msg?: string) => {
    const err = (obj as { err?: unknown }).err;
    if (err !== undefined && isConnectionFailure(err)) onFailure(err, msg);
    else log[level](obj, msg);
  };
  return { info: (obj, msg) => log.info(obj, msg), warn: divert('warn'), error: divert('error') };
}

/**
 * For a process that cannot pause its worker (serve: its pool also answers requests):
 * connection failures as one line without stack, at most one per interval, with how
 * many were left out.
 */
export function throttleConnectionFailures(log: Log, intervalMs = 10_000): Log {
  let lastAt = 0;
  let leftOut = 0;
  return divertConnectionFailures(log, (error, during) => {
    const now = Date.now();
    if (now - lastAt < intervalMs) {
      leftOut++;
      return;
    }
    log.warn({ reason: reasonOf(error), during, similar_left_out: leftOut }, 'the database cannot be reached; the worker retries at each poll');
    lastAt = now;
    leftOut = 0;
  });
}
