import { Command } from 'commander';
import { callApi, printAnswer, reportCallError, withApiOptions, type ApiOptions } from './api-client.js';

/**
 * `tally statement WALLET --from --to [--csv]`: the wallet's statement over [from, to)
 * from a running server (GET /v1/wallets/{id}/statement): opening, every entry with the
 * running balance, closing, totals per type — the API's JSON, or its CSV with --csv (for
 * a spreadsheet: `tally statement … --csv > december.csv`).
 */

interface StatementOptions extends ApiOptions {
  from: string;
  to: string;
  csv?: boolean;
}

export function registerStatement(program: Command): void {
  withApiOptions(
    program
      .command('statement')
      .description("a wallet's statement over [from, to): opening and closing balance, every entry with the running balance, totals per type")
      .argument('<wallet_id>'),
    'either',
  )
    .requiredOption('--from <instant>', 'RFC 3339, inclusive, e.g. 2026-12-01T00:00:00Z')
    .requiredOption('--to <instant>', 'RFC 3339, exclusive, not in the future')
    .option('--csv', 'print the CSV answer (Accept: text/csv) instead of JSON')
    .action(async (wallet: string, options: StatementOptions) => {
      try {
        const query = new URLSearchParams({ from: options.from, to: options.to }).toString();
        const answer = await callApi(options, {
          caller: 'either',
          method: 'GET',
          path: `/v1/wallets/${encodeURIComponent(wallet)}/statement?${query}`,
          ...(options.csv ? { accept: 'text/csv' } : {}),
        });
        if (options.csv) process.stdout.write(String(answer));
        else printAnswer(answer, options.field);
      } catch (error) {
        reportCallError('statement', error);
      }
    });
}
