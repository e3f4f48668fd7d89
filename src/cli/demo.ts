import { runDemo } from '../demo/demo.js';
import { processConfig } from '../config/index.js';

export async function demoCommand(options: { jobs: number; seed?: number; concurrency: number; serve?: boolean; port?: number }): Promise<void> {
  const ok = await runDemo({
    jobs: options.jobs,
    seed: options.seed ?? Date.now() % 1_000_000,
    concurrency: options.concurrency,
    ...(options.serve ? { serve: { port: options.port ?? processConfig().port } } : {}),
  });
  process.exit(ok ? 0 : 1);
}
