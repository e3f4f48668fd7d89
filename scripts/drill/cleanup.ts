/**
 * Everything the drill starts or creates registers how to undo it here, and it is undone
 * once, newest first — at the end of a run, on a failure, or on Ctrl-C (SIGINT) and
 * SIGTERM — so no PostgreSQL, pg_autoctl or Tally process and no temp dir outlives it.
 */
export class Cleanup {
  private readonly steps: { what: string; undo: () => Promise<void> | void }[] = [];
  private running: Promise<void> | null = null;

  add(what: string, undo: () => Promise<void> | void): void {
    this.steps.push({ what, undo });
  }

  run(log: (line: string) => void): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.undo();
        } catch (error) {
          log(`cleanup: ${step.what} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.running;
  }

  /** A second Ctrl-C while cleaning up is ignored: stopping half-way would leave servers behind. */
  onSignals(log: (line: string) => void): void {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (this.running) return;
        log(`\n${signal}: stopping every process the drill started and removing its temp dir…`);
        void this.run(log).then(() => process.exit(130));
      });
    }
  }
}
