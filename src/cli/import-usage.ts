import { readFile } from 'node:fs/promises';
import { processConfig } from '../config/index.js';
import { openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { withTransaction } from '../db/transaction.js';
import { importProviderUsage, parseUsageFile } from '../reconcile/provider-usage.js';

export async function importUsageCommand(file: string): Promise<void> {
  const content = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  const { importId, records } = parseUsageFile(content);
  const db = await openDatabase(processConfig(), { max: 2 });
  try {
    await migrate(db.pool);
    const result = await withTransaction(db.pool, (tx) => importProviderUsage(tx, importId, records));
    console.log(`import ${importId}: ${result.imported} imported, ${result.already_imported} already imported`);
  } finally {
    await db.close();
  }
}
