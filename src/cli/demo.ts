import { runDemo } from '../demo/demo.js';

export async function demoCommand(options: { jobs: number; seed?: number; concurrency: number }): Promise<void> {
  const ok = await runDemo({ jobs: options.jobs, seed: options.seed ?? Date.now() % 1_000_000, concurrency: options.concurrency });
  process.exit(ok ? 0 : 1);
}
