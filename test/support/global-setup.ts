import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbedded, type EmbeddedServer } from '../../src/dev-db/server.js';
import { createPool } from '../../src/db/pool.js';
import { migrate } from '../../src/db/migrate.js';
import { TEMPLATE_DATABASE } from './names.js';
import { RUN_MARK, stopStrayServers } from './stray-servers.js';

/**
 * One PostgreSQL per test run: DATABASE_URL when given, otherwise an embedded server
 * with its data in the OS temp dir (a folder the postgres user can enter). Migrations
 * are applied once to a template database; each test file clones it (fast).
 */
let server: EmbeddedServer | null = null;
let dataDir: string | null = null;

export async function setup(project: TestProject): Promise<void> {
  // Inherited by every worker, every child and every server they start (see stray-servers.ts).
  process.env[RUN_MARK] = randomUUID();
  let url = process.env.DATABASE_URL;
  if (!url) {
    dataDir = await mkdtemp(join(tmpdir(), 'tally-test-'));
    // mkdtemp makes the folder 0700; as root, PostgreSQL runs as `postgres` and must enter it.
    await chmod(dataDir, 0o755);
    server = await startEmbedded({ dataDir, persistent: false, postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off'] });
    url = server.url;
  }
  const admin = withDatabase(url, 'postgres');
  const pool = createPool(admin, { max: 1 });
  await pool.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
  await pool.query(`create database ${TEMPLATE_DATABASE}`);
  await pool.end();
  const templatePool = createPool(withDatabase(url, TEMPLATE_DATABASE), { max: 2 });
  await migrate(templatePool);
  await templatePool.end();
  project.provide('databaseUrl', url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  const strays = await stopStrayServers(process.env[RUN_MARK]!);
  if (strays.length > 0) {
    console.warn(
      `stopped ${strays.length} process(es) the test run had left running:\n${strays.map((p) => `  ${p.pid} ${p.command.join(' ')}`).join('\n')}`,
    );
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}
