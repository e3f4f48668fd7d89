import type { Command } from 'commander';
import { wholeNumber } from './key-value.js';

/**
 * `tally grants …` commands that work on the database itself (like `tally reconcile`):
 * `grants expire`. They join the `grants` command when another module registered it
 * already (the HTTP API's grant commands), so the group is one whichever comes first.
 */
export function registerGrantCommands(program: Command): void {
  const grants = program.commands.find((c) => c.name() === 'grants') ?? program.command('grants').description('credit grants');
  grants
    .command('expire')
    .description(
      "expire the grants past their expires_at now (what the workers' sweep does every 2 s: each once, keyed); --dry-run lists what would expire in the next hours",
    )
    .option('--dry-run', 'write nothing: list the grants expiring in the next --hours, with what would lapse, and the total per currency')
    .option('--hours <n>', 'with --dry-run: how far ahead to look', (value: string) => wholeNumber(value, '--hours'), 24)
    .option('--json', 'print the answer as JSON')
    .action(async (options: { dryRun?: boolean; hours: number; json?: boolean }) =>
      (await import('./grants-expire.js')).grantsExpireCommand(options),
    );
}
