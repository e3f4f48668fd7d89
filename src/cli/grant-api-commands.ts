import { type Command, Option } from 'commander';
import { apiAction, callApi, newIdempotencyKey, withApiOptions, type ApiOptions } from './api-client.js';
import { wholeNumber } from './key-value.js';

/**
 * `tally grants create`: a grant of credit to a wallet over a running server's HTTP API
 * (POST /v1/wallets/{id}/grants, the operator's call). Its Idempotency-Key is required
 * and kept for ever: a grant is created once however often it is retried with the same
 * key. Without --idempotency-key one is made and printed on stderr before the call, so a
 * retry after a lost answer can reuse it.
 */

interface CreateOptions extends ApiOptions {
  amount: string;
  category: string;
  priority?: number;
  effectiveAt?: string;
  expiresAt?: string;
  reference?: string;
  idempotencyKey?: string;
}

function grantBody(options: CreateOptions) {
  return {
    amount: options.amount,
    category: options.category,
    ...(options.priority !== undefined ? { priority: options.priority } : {}),
    ...(options.effectiveAt !== undefined ? { effective_at: options.effectiveAt } : {}),
    ...(options.expiresAt !== undefined ? { expires_at: options.expiresAt } : {}),
    ...(options.reference !== undefined ? { reference: options.reference } : {}),
  };
}

export function registerGrantApiCommands(program: Command): void {
  const grants = program.commands.find((c) => c.name() === 'grants') ?? program.command('grants').description('credit grants');
  withApiOptions(
    grants
      .command('create')
      .description("give a wallet a grant of credit (admin): paid or promotional, with a priority, a start and an expiry; prints the grant")
      .argument('<wallet_id>'),
    'admin',
  )
    .requiredOption('--amount <amount>', 'a decimal string in major units, e.g. 25.00')
    .addOption(new Option('--category <category>', 'paid (money received) or promotional (given)').choices(['paid', 'promotional']).makeOptionMandatory())
    .option('--priority <n>', 'lowest drawn first, 0 to 100 (default 50)', (value: string) => wholeNumber(value, '--priority'))
    .option('--effective-at <instant>', 'RFC 3339: when its money enters the wallet (default now)')
    .option('--expires-at <instant>', 'RFC 3339, in the future: when its unheld remaining lapses (default never)')
    .option('--reference <text>', 'e.g. the campaign or the order')
    .option('--idempotency-key <key>', 'Idempotency-Key header (default: a new one, printed on stderr): a retry with the same key creates nothing more')
    .action(
      apiAction('grants create', (wallet: string, options: CreateOptions) => {
        let key = options.idempotencyKey;
        if (key === undefined) {
          key = newIdempotencyKey();
          console.error(`tally grants create: Idempotency-Key ${key} (to retry this grant, pass --idempotency-key ${key}: it is created at most once)`);
        }
        return callApi(options, { caller: 'admin', method: 'POST', path: `/v1/wallets/${encodeURIComponent(wallet)}/grants`, body: grantBody(options), idempotencyKey: key });
      }),
    );
}
