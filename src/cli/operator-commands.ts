import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { apiAction, callApi, newIdempotencyKey, withApiOptions, type ApiOptions } from './api-client.js';
import { WAIT_STATES, waitForJob, type WaitOptions } from './job-wait.js';
import { collectPairs, decimalString, wholeNumber } from './key-value.js';

/**
 * `tally tenants|wallets|prices|providers|jobs ...`: the common operator actions, as
 * calls to a running server's HTTP API (the same requests a script or the docs' curl
 * examples make). Each prints the JSON answer; `--field` prints one value of it for
 * `$(...)`. Request bodies are the routes' (src/api/routes/); the server validates them.
 */

const id = (value: string) => encodeURIComponent(value);
const seconds = (value: string) => {
  const n = wholeNumber(value, 'seconds');
  if (n < 1) throw new InvalidArgumentError('expected at least 1 second');
  return n;
};
export const idempotencyOption = (required: boolean) =>
  new Option('--idempotency-key <key>', required ? 'Idempotency-Key header (default: a random one, printed if the call gets no answer)' : 'Idempotency-Key header: a retry with the same key and body replays the first answer');

export interface KeyOption {
  idempotencyKey?: string;
}

function tenantCommands(program: Command): void {
  const tenants = program.command('tenants').description('tenants (admin)');
  withApiOptions(tenants.command('create').description('create a tenant; the answer carries its api_key, shown only once').argument('<name>'), 'admin')
    .addOption(idempotencyOption(false))
    .action(
      apiAction('tenants create', (name: string, options: ApiOptions & KeyOption) =>
        callApi(options, { caller: 'admin', method: 'POST', path: '/v1/tenants', body: { name }, idempotencyKey: options.idempotencyKey }),
      ),
    );
}

function walletCommands(program: Command): void {
  const wallets = program.command('wallets').description("tenants' wallets: open, show, credit, entries");
  withApiOptions(wallets.command('create').description("open the tenant's wallet in a currency (a tenant's call: --token or TALLY_API_KEY)").argument('<currency>', 'e.g. USD'), 'tenant')
    .addOption(idempotencyOption(false))
    .action(
      apiAction('wallets create', (currency: string, options: ApiOptions & KeyOption) =>
        callApi(options, { caller: 'tenant', method: 'POST', path: '/v1/wallets', body: { currency }, idempotencyKey: options.idempotencyKey }),
      ),
    );
  withApiOptions(wallets.command('show').description("a wallet's balance, reserved and available amounts").argument('<wallet_id>'), 'either').action(
    apiAction('wallets show', (wallet: string, options: ApiOptions) => callApi(options, { caller: 'either', method: 'GET', path: `/v1/wallets/${id(wallet)}` })),
  );
  withApiOptions(wallets.command('entries').description("a wallet's ledger entries, newest first").argument('<wallet_id>'), 'either')
    .option('--limit <n>', 'entries per page (1 to 100)')
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .action(
      apiAction('wallets entries', (wallet: string, options: ApiOptions & { limit?: string; cursor?: string }) => {
        const query = new URLSearchParams({ ...(options.limit ? { limit: options.limit } : {}), ...(options.cursor ? { cursor: options.cursor } : {}) }).toString();
        return callApi(options, { caller: 'either', method: 'GET', path: `/v1/wallets/${id(wallet)}/entries${query ? `?${query}` : ''}` });
      }),
    );
  withApiOptions(
    wallets
      .command('credit')
      .description('top up a wallet after a payment (admin); applied once per Idempotency-Key, however often retried')
      .argument('<wallet_id>')
      .argument('<amount>', 'a decimal string in major units, e.g. 10.00'),
    'admin',
  )
    .option('--reference <text>', 'e.g. the payment id')
    .addOption(idempotencyOption(true))
    .action(
      apiAction('wallets credit', (wallet: string, amount: string, options: ApiOptions & KeyOption & { reference?: string }) =>
        callApi(options, {
          caller: 'admin',
          method: 'POST',
          path: `/v1/wallets/${id(wallet)}/credits`,
          body: { amount, ...(options.reference !== undefined ? { reference: options.reference } : {}) },
          idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
        }),
      ),
    );
}

function priceCommands(program: Command): void {
  const prices = program.command('prices').description("models' price versions (admin)");
  withApiOptions(prices.command('publish').description('publish a new immutable price version of a model (the same prices again answer the current version)').argument('<model>'), 'admin')
    .requiredOption('--currency <code>', 'e.g. USD')
    .requiredOption('--unit-price <dimension=price>', 'price per 1,000,000 units of a usage dimension, e.g. input_tokens=1.00 (repeatable)', collectPairs(decimalString))
    .action(
      apiAction('prices publish', (model: string, options: ApiOptions & { currency: string; unitPrice: Record<string, string> }) =>
        callApi(options, { caller: 'admin', method: 'PUT', path: `/v1/prices/${id(model)}`, body: { currency: options.currency, unit_prices: options.unitPrice } }),
      ),
    );
}

interface ProviderOptions extends ApiOptions, KeyOption {
  kind: string;
  secret?: string[];
  apiKey?: string;
  baseUrl?: string;
  userId?: string;
  jwksFile?: string;
  failedWithUsage?: string;
  cancelGraceSeconds?: number;
  holdTtlSeconds?: number;
}

async function providerBody(name: string, options: ProviderOptions) {
  const policies = {
    ...(options.failedWithUsage !== undefined ? { failed_with_usage: options.failedWithUsage } : {}),
    ...(options.cancelGraceSeconds !== undefined ? { cancel_grace_seconds: options.cancelGraceSeconds } : {}),
    ...(options.holdTtlSeconds !== undefined ? { hold_ttl_seconds: options.holdTtlSeconds } : {}),
  };
  return {
    name,
    kind: options.kind,
    ...(options.secret ? { secrets: options.secret } : {}),
    ...(options.apiKey !== undefined ? { api_key: options.apiKey } : {}),
    ...(options.baseUrl !== undefined ? { base_url: options.baseUrl } : {}),
    ...(options.userId !== undefined ? { user_id: options.userId } : {}),
    ...(options.jwksFile !== undefined ? { jwks: JSON.parse(await readFile(options.jwksFile, 'utf8')) as unknown } : {}),
    ...(Object.keys(policies).length > 0 ? { policies } : {}),
  };
}

function providerCommands(program: Command): void {
  const providers = program.command('providers').description('providers that send webhooks (admin)');
  withApiOptions(
    providers
      .command('create')
      .description('register a provider; its webhooks arrive at /v1/webhooks/<name> (settings per kind: docs/providers/)')
      .argument('<name>', 'lowercase letters, digits, - and _'),
    'admin',
  )
    .option('--kind <kind>', 'generic, replicate, openai or fal', 'generic')
    .option('--secret <secret>', 'a Standard Webhooks signing secret, whsec_... (repeatable)', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    .option('--api-key <key>', "the provider's API key, for kinds that fetch usage (write-only)")
    .option('--base-url <url>', "the provider's API, for kinds that fetch usage")
    .option('--user-id <id>', 'fal only: your fal user id')
    .option('--jwks-file <file>', "fal only: the provider's JWK Set, as JSON")
    .addOption(new Option('--failed-with-usage <policy>', 'on job.failed with usage').choices(['release', 'capture']))
    .option('--cancel-grace-seconds <n>', "after a tenant's cancel, how long the provider has to report", seconds)
    .option('--hold-ttl-seconds <n>', 'a hold open longer raises hold_open_past_expiry', seconds)
    .addOption(idempotencyOption(false))
    .action(
      apiAction('providers create', async (name: string, options: ProviderOptions) =>
        callApi(options, { caller: 'admin', method: 'POST', path: '/v1/providers', body: await providerBody(name, options), idempotencyKey: options.idempotencyKey }),
      ),
    );
}

interface SubmitOptions extends ApiOptions, KeyOption {
  wallet: string;
  model: string;
  provider: string;
  limit: Record<string, number>;
  ref?: string;
  autoExtendStep?: Record<string, number>;
  autoExtendMax?: Record<string, number>;
}

function jobCommands(program: Command): void {
  const jobs = program.command('jobs').description('jobs: submit, show, wait until settled');
  withApiOptions(
    jobs.command('submit').description("submit a job: reserves the price of its limits (a tenant's call: --token or TALLY_API_KEY)"),
    'tenant',
  )
    .requiredOption('--wallet <wallet_id>', 'the wallet that pays')
    .requiredOption('--model <model>', 'a model with a published price in the wallet\'s currency')
    .requiredOption('--provider <name>', 'the provider that runs it')
    .requiredOption('--limit <dimension=n>', 'the most usage to reserve for, e.g. input_tokens=10000 (repeatable)', collectPairs(wholeNumber))
    .option('--ref <provider_job_ref>', "the provider's id for the work, when known")
    .option(
      '--auto-extend-step <dimension=n>',
      'grow the hold by itself by whole steps of this many units as progress reports near the limits (repeatable; with --auto-extend-max)',
      collectPairs(wholeNumber),
    )
    .option('--auto-extend-max <dimension=n>', 'the limits automatic extensions never go beyond, per step dimension (repeatable)', collectPairs(wholeNumber))
    .addOption(idempotencyOption(true))
    .action(
      apiAction('jobs submit', (options: SubmitOptions) =>
        callApi(options, {
          caller: 'tenant',
          method: 'POST',
          path: '/v1/jobs',
          body: {
            wallet_id: options.wallet,
            model: options.model,
            provider: options.provider,
            limits: options.limit,
            ...(options.ref ? { provider_job_ref: options.ref } : {}),
            // both or neither: the server names what is missing (422 invalid_limits)
            ...(options.autoExtendStep || options.autoExtendMax
              ? { auto_extend: { step: options.autoExtendStep ?? {}, max_limits: options.autoExtendMax ?? {} } }
              : {}),
          },
          idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
        }),
      ),
    );
  withApiOptions(jobs.command('show').description('a job with its settlements and events').argument('<job_id>'), 'either').action(
    apiAction('jobs show', (job: string, options: ApiOptions) => callApi(options, { caller: 'either', method: 'GET', path: `/v1/jobs/${id(job)}` })),
  );
  withApiOptions(
    jobs
      .command('wait')
      .description('poll a job until it is settled (a webhook\'s 2xx means accepted; the worker settles it a moment later); prints the job')
      .argument('<job_id>'),
    'either',
  )
    .addOption(new Option('--state <state>', 'the state to wait for (settled: every event accepted so far is settled, whatever the state); exit 1 if the job ends in another one').choices(WAIT_STATES).default('terminal'))
    .option('--timeout <seconds>', 'give up after this long (exit 1)', seconds, 30)
    .action(apiAction('jobs wait', (job: string, options: WaitOptions) => waitForJob(job, options)));
}

export function registerOperatorCommands(program: Command): void {
  tenantCommands(program);
  walletCommands(program);
  priceCommands(program);
  providerCommands(program);
  jobCommands(program);
}
