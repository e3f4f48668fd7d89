import { Command } from 'commander';
import { canonicalInstant } from '../instant.js';
import { callApi, printAnswer, reportCallError, withApiOptions, type ApiOptions } from './api-client.js';

/**
 * `tally statement WALLET --from --to [--csv]`: the wallet's statement over [from, to)
 * from a running server (GET /v1/wallets/{id}/statement): opening, every entry with the
 * running balance, closing, totals per type — the API's JSON, or its CSV with --csv (for
 * a spreadsheet: `tally statement … --csv > december.csv`).
 */

/**
 * The API refuses a `to` in the future (an answer about the future could still change);
 * asked for "this month" with its end, an operator means "so far": the end becomes now,
 * to the second, and stderr says which instant was used. Anything that is no instant is
 * left for the API to refuse in its own words.
 */
export function clampedTo(to: string, now: Date): { to: string; note: string | null } {
  // The API's own reading of an instant (Date.parse alone would take "2030" for one).
  const canonical = canonicalInstant(to);
  const end = canonical === null ? Number.NaN : Date.parse(canonical);
  if (Number.isNaN(end) || end <= now.getTime()) return { to, note: null };
  // Whole seconds: readable, and a moment behind now for a server whose clock is a little behind ours.
  const used = new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return { to: used, note: `--to ${to} is in the future; the statement ends now instead, at ${used} (statements cover the past only)` };
}

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
    .requiredOption('--to <instant>', 'RFC 3339, exclusive; one in the future means now (said on stderr)')
    .option('--csv', 'print the CSV answer (Accept: text/csv) instead of JSON')
    .action(async (wallet: string, options: StatementOptions) => {
      try {
        const { to, note } = clampedTo(options.to, new Date());
        if (note) console.error(`tally statement: ${note}`);
        const query = new URLSearchParams({ from: options.from, to }).toString();
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
