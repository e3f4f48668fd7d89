import { createServer } from 'node:net';

/**
 * A port someone else holds, found before anything starts: `serve` and `demo --serve`
 * start the embedded PostgreSQL (tens of seconds the first time) and run migrations
 * before they listen, and a busy port found only then cost all that for a one-line
 * error that did not say what to do.
 */
export class PortBusy extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    how: string,
  ) {
    super(`port ${port} on ${host} is already in use (by another tally serve, or another program): ${how}`);
    this.name = 'PortBusy';
  }
}

/** Whether the error is the listen's "address in use". */
export function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'EADDRINUSE';
}

/**
 * Binds the port for a moment and lets it go: refused → PortBusy naming the port and
 * `how` to choose another. Another program may still take the port before the real
 * listen; that listen's EADDRINUSE is then reported the same way by its caller. Port 0
 * (any free port) needs no check.
 */
export async function ensurePortFree(host: string, port: number, how: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      // exclusive: a cluster worker's shared handle would not tell us the port is taken.
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (error) {
    if (isAddressInUse(error)) throw new PortBusy(host, port, how);
    throw error;
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}
