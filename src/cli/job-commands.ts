import type { Command } from 'commander';
import { apiAction, callApi, newIdempotencyKey, withApiOptions, type ApiOptions } from './api-client.js';
import { collectPairs, wholeNumber } from './key-value.js';
import { idempotencyOption, type KeyOption } from './operator-commands.js';

interface ExtendOptions extends ApiOptions, KeyOption {
  add: Record<string, number>;
}

/**
 * `tally jobs list|cancel|extend`: the jobs an operator looks for, and a tenant's cancel, over a
 * running server's HTTP API (GET /v1/jobs, POST /v1/jobs/{id}/cancel). They join the
 * `jobs` group of operator-commands.ts (submit, show, wait), whichever registers first.
 */

interface ListOptions extends ApiOptions {
  wallet?: string;
  state?: string;
  tenant?: string;
  limit?: string;
  startingAfter?: string;
}

/** The list's query: only the filters given; the server validates each (and names the allowed states). */
function listQuery(options: ListOptions): string {
  const query = new URLSearchParams({
    ...(options.wallet !== undefined ? { wallet_id: options.wallet } : {}),
    ...(options.state !== undefined ? { state: options.state } : {}),
    ...(options.tenant !== undefined ? { tenant_id: options.tenant } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.startingAfter !== undefined ? { starting_after: options.startingAfter } : {}),
  }).toString();
  return query ? `?${query}` : '';
}

export function registerJobCommands(program: Command): void {
  const jobs = program.commands.find((c) => c.name() === 'jobs') ?? program.command('jobs').description('jobs');
  withApiOptions(jobs.command('list').description('jobs, newest first, without their settlements and events (tally jobs show has those)'), 'either')
    .option('--wallet <wallet_id>', "only this wallet's jobs")
    .option('--state <state>', 'only jobs in this state: reserved, running, cancel_requested, usage_pending, captured or released')
    .option('--tenant <tenant_id>', "the admin's call: only this tenant's jobs")
    .option('--limit <n>', 'jobs per page (1 to 100, default 20)')
    .option('--starting-after <job_id>', 'the page after this job (older); has_more says whether there is one')
    .action(apiAction('jobs list', (options: ListOptions) => callApi(options, { caller: 'either', method: 'GET', path: `/v1/jobs${listQuery(options)}` })));
  withApiOptions(
    jobs
      .command('cancel')
      .description("ask to cancel a job (a tenant's call: --token or TALLY_API_KEY): the hold stays until the provider's terminal event or the cancel grace passes; prints the job")
      .argument('<job_id>'),
    'tenant',
  ).action(
    apiAction('jobs cancel', (job: string, options: ApiOptions) =>
      callApi(options, { caller: 'tenant', method: 'POST', path: `/v1/jobs/${encodeURIComponent(job)}/cancel` }),
    ),
  );
  withApiOptions(
    jobs
      .command('extend')
      .description(
        "grow a running job's hold (a tenant's call: --token or TALLY_API_KEY): its limits by --add, its hold by their price at the job's pinned version; prints the job",
      )
      .argument('<job_id>'),
    'tenant',
  )
    .requiredOption('--add <dimension=n>', 'units to add to the limits, e.g. gpu_seconds=600 (repeatable)', collectPairs(wholeNumber))
    .addOption(idempotencyOption(true))
    .action(
      apiAction('jobs extend', (job: string, options: ExtendOptions) =>
        callApi(options, {
          caller: 'tenant',
          method: 'POST',
          path: `/v1/jobs/${encodeURIComponent(job)}/extensions`,
          body: { add: options.add },
          idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
        }),
      ),
    );
}
