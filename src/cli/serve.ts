import { randomBytes } from 'node:crypto';
import { openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { buildApp } from '../api/app.js';

export interface ServeOptions {
  port?: number;
  workers: number;
}

export async function serveCommand(options: ServeOptions): Promise<void> {
  const db = await openDatabase({ max: 20 });
  await migrate(db.pool);
  const app = await buildApp({ pool: db.pool });
  const port = options.port ?? Number(process.env.PORT ?? 8080);
  if (!process.env.TALLY_ADMIN_TOKEN && db.embedded) {
    process.env.TALLY_ADMIN_TOKEN = randomBytes(24).toString('base64url');
    console.log(`TALLY_ADMIN_TOKEN=${process.env.TALLY_ADMIN_TOKEN} (generated for this run; set it to choose your own)`);
  }
  await app.listen({ port, host: process.env.HOST ?? '0.0.0.0' });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    app.log.info('shutting down');
    await app.close();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
