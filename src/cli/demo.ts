import { runDemo } from '../demo/demo.js';
import { processConfig } from '../config/index.js';
import { ensurePortFree } from './port-check.js';

/** Where `--serve` keeps the demo's server: this machine only, like the demo's database. */
const DEMO_HOST = '127.0.0.1';

export async function demoCommand(options: { jobs: number; seed?: number; concurrency: number; serve?: boolean; port?: number }): Promise<void> {
  const config = processConfig();
  const port = options.port ?? config.port;
  // Before the embedded PostgreSQL and the whole run: a busy port found at the end wasted both.
  if (options.serve) await ensurePortFree(DEMO_HOST, port, 'pass --port N to use another');
  const ok = await runDemo({
    jobs: options.jobs,
    seed: options.seed ?? Date.now() % 1_000_000,
    concurrency: options.concurrency,
    config,
    ...(options.serve ? { serve: { port } } : {}),
  });
  process.exit(ok ? 0 : 1);
}
