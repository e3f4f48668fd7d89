import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool.js';
import { TEMPLATE_DATABASE } from './names.js';
import { withDatabase } from './global-setup.js';

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
}

/**
 * A fresh database for the calling test file, cloned from the migrated template and
 * dropped after the file's tests. Call at module level or in beforeAll.
 */
export async function freshDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const serverUrl = inject('databaseUrl');
  const name = `tally_test_${randomBytes(6).toString('hex')}`;
  const admin = createPool(withDatabase(serverUrl, 'postgres'), { max: 1 });
  await admin.query(`create database ${name} template ${TEMPLATE_DATABASE}`);
  const url = withDatabase(serverUrl, name);
  const pool = createPool(url, { max: options.max ?? 20 });
  afterAll(async () => {
    await pool.end();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  return { name, url, pool };
}
