import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbedded, type EmbeddedServer } from '../../src/dev-db/server.js';
import { createPool } from '../../src/db/pool.js';
import { migrate } from '../../src/db/migrate.js';
import { TEMPLATE_DATABASE } from './names.js';
import { createRunRoot, removeRunRoot, removeStaleRunRoots } from './run-root.js';
import { RUN_MARK, stopStrayServers } from './stray-servers.js';

/**
 * One PostgreSQL per test run: DATABASE_URL when given, otherwise an embedded server
 * with its data in the run's own folder (run-root.ts: everything the run makes on disk is
 * there, and goes at the end). Migrations are applied once to a template database; each
 * test file clones it (fast).
 */
let server: EmbeddedServer | null = null;
let runRoot: string | null = null;

export async function setup(project: TestProject): Promise<void> {
  // Inherited by every worker, every child and every server they start (see stray-servers.ts).
  const runId = randomUUID();
  process.env[RUN_MARK] = runId;
  const base = tmpdir();
  for (const stale of await removeStaleRunRoots(base)) console.warn(`removed ${stale}, left by a test run that was killed`);
  runRoot = await createRunRoot(base, runId);
  // Inherited like the mark: temp folders (os.tmpdir() reads TMPDIR), and the data folder
  // of every `tally` a test starts without one of its own — never the developer's ./.tally,
  // whose kept admin token would be sent instead of the test's credentials.
  process.env.TMPDIR = runRoot;
  process.env.TALLY_DATA_DIR = join(runRoot, 'tally-data');
  await mkdir(process.env.TALLY_DATA_DIR);
  try {
    project.provide('databaseUrl', await templateServer());
  } catch (error) {
    // Whether vitest still calls teardown after a setup that threw depends on how it
    // closes; this one is sure, and a second call finds nothing left to do.
    await teardown();
    throw error;
  }
}

async function templateServer(): Promise<string> {
  let url = process.env.DATABASE_URL;
  if (!url) {
    const dataDir = await mkdtemp(join(tmpdir(), 'tally-test-'));
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
  return url;
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = null;
  const strays = await stopStrayServers(process.env[RUN_MARK]!);
  if (strays.length > 0) {
    console.warn(
      `stopped ${strays.length} process(es) the test run had left running:\n${strays.map((p) => `  ${p.pid} ${p.command.join(' ')}`).join('\n')}`,
    );
  }
  if (runRoot) await removeRunRoot(runRoot);
  runRoot = null;
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
