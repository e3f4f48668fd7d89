import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The harness drives Tally from outside — child processes, HTTP, SQL — except for one
 * thing it runs in-process: starting the embedded PostgreSQL. That comes from the app's
 * own build (dist/), loaded at run time so the bench compiles apart from the app; the
 * interface below is the part of src/dev-db/server.ts it relies on.
 */
export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** false deletes the cluster on stop */
  persistent?: boolean;
  log?: (message: string) => void;
  postgresFlags?: string[];
}

/** The package root, from dist/bench/ (compiled) — where bin/ and dist/ are. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TALLY_BIN = join(ROOT, 'bin', 'tally');
export const BENCH_DIST = join(ROOT, 'dist', 'bench');

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const module = (await import(pathToFileURL(join(ROOT, 'dist', 'dev-db', 'server.js')).href)) as {
    startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer>;
  };
  return module.startEmbedded(options);
}
