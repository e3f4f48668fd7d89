import { EmbeddedStartError } from '../dev-db/server.js';
import { ConnectionLost } from '../db/errors.js';
import { debugStacks } from '../config/index.js';

/** Operators get a sentence that says what to do, not a stack trace. */
export function reportFatal(error: unknown): never {
  if (error instanceof EmbeddedStartError) {
    console.error(`tally: ${error.message}`);
  } else if (error instanceof ConnectionLost || (error as NodeJS.ErrnoException)?.code === 'ECONNREFUSED') {
    console.error(`tally: cannot reach the database (${(error as Error).message}). Check DATABASE_URL, or unset it to use the embedded server.`);
  } else {
    console.error(`tally: ${error instanceof Error ? error.message : String(error)}`);
    if (debugStacks() && error instanceof Error) console.error(error.stack);
  }
  process.exit(1);
}
