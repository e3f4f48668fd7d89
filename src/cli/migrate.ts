import { openDatabase } from '../db/connect.js';
import { processConfig } from '../config/index.js';
import { migrate } from '../db/migrate.js';

export async function migrateCommand(): Promise<void> {
  const db = await openDatabase(processConfig(), { max: 2 });
  try {
    const applied = await migrate(db.pool, (message) => console.log(message));
    console.log(applied.length === 0 ? 'migrations: up to date' : `migrations: applied ${applied.length}`);
  } finally {
    await db.close();
  }
}
