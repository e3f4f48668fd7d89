import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** How much of a child's output is kept in memory, for a failure message. */
const TAIL_CHARS = 4000;

/**
 * A child's stdout and stderr appended to a log file, and its last lines kept: the
 * bench's processes and the failover drill's. `end` closes the file.
 */
export function logOutput(child: ChildProcess, logPath: string): { tail(): string; end(): Promise<void> } {
  const log = createWriteStream(logPath, { flags: 'a' });
  let tail = '';
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    tail = (tail + chunk.toString()).slice(-TAIL_CHARS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { tail: () => tail, end: () => new Promise<void>((resolve) => log.end(resolve)) };
}
