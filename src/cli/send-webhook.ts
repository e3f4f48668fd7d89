import { randomUUID } from 'node:crypto';
import { Command, InvalidArgumentError } from 'commander';
import { Webhook } from 'standardwebhooks';
import { PROVIDER_EVENT_TYPES } from '../webhooks/canonical-event.js';
import { apiUrl, type ApiOptions } from './api-client.js';
import { collectPairs, wholeNumber } from './key-value.js';

/**
 * `tally send-webhook`: one webhook of the `generic` kind (CONTRACT "The generic
 * provider"), signed per Standard Webhooks with the provider's secret by the reference
 * package, as a provider would send it. For trying a setup out and for the quickstart:
 * signing by hand is where a first try usually goes wrong.
 */

/** `completed` or `job.completed`: the generic types, with or without their prefix. */
const TYPE_NAMES = PROVIDER_EVENT_TYPES.map((t) => t.slice('job.'.length));

interface SendOptions extends Pick<ApiOptions, 'url'> {
  provider: string;
  secret: string;
  job?: string;
  ref?: string;
  type: string;
  usage?: Record<string, number>;
  correction?: number;
  id?: string;
}

/**
 * The body carries no timestamp (it is optional; the signed header has one), so the same
 * options give the same bytes: sent again under the same --id, it is a duplicate.
 */
export function genericBody(options: Pick<SendOptions, 'job' | 'ref' | 'type' | 'usage' | 'correction'>): string {
  const data = {
    ...(options.job !== undefined ? { job_id: options.job } : {}),
    ...(options.ref !== undefined ? { provider_job_ref: options.ref } : {}),
    ...(options.usage !== undefined ? { usage: options.usage } : {}),
    ...(options.correction !== undefined ? { correction: options.correction } : {}),
  };
  return JSON.stringify({ type: `job.${options.type}`, data });
}

async function sendWebhook(options: SendOptions): Promise<void> {
  if (options.job === undefined && options.ref === undefined) {
    console.error("tally send-webhook: name the job: --job <Tally's job id> or --ref <provider_job_ref>");
    process.exitCode = 1;
    return;
  }
  const now = new Date();
  const id = options.id ?? `msg_${randomUUID()}`;
  const body = genericBody(options);
  let signature: string;
  try {
    signature = new Webhook(options.secret).sign(id, now, body);
  } catch (error) {
    console.error(`tally send-webhook: --secret is not a Standard Webhooks secret (whsec_ + base64): ${(error as Error).message}`);
    process.exitCode = 1;
    return;
  }
  const url = `${apiUrl(options)}/v1/webhooks/${encodeURIComponent(options.provider)}`;
  const headers = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signature,
  };
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body });
  } catch (error) {
    console.error(`tally send-webhook: no answer from ${url} (${(error as Error).message}): is \`tally serve\` running there? (--url or TALLY_URL)`);
    process.exitCode = 2;
    return;
  }
  const text = await response.text();
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON: shown as it came
  }
  console.log(`HTTP ${response.status}`);
  console.log(shown);
  if (!response.ok) process.exitCode = 1;
}

const eventType = (value: string) => {
  const name = value.replace(/^job\./, '');
  if (!TYPE_NAMES.includes(name)) throw new InvalidArgumentError(`expected one of ${TYPE_NAMES.join(', ')}`);
  return name;
};

const correction = (value: string) => {
  const n = wholeNumber(value, '--correction');
  if (n < 1) throw new InvalidArgumentError('the correction number is a positive integer');
  return n;
};

export function registerSendWebhook(program: Command): void {
  program
    .command('send-webhook')
    .description('send a signed test webhook of the generic kind to a running server; prints the status and answer, exit 0 on 2xx')
    .requiredOption('--provider <name>', 'the provider, as registered (its webhook route is /v1/webhooks/<name>)')
    .requiredOption('--secret <secret>', "one of the provider's signing secrets (whsec_...)")
    .option('--job <job_id>', "Tally's job id (data.job_id)")
    .option('--ref <provider_job_ref>', "the provider's id for the job (data.provider_job_ref)")
    .option('--type <type>', `the event type: ${TYPE_NAMES.join(', ')} (job. prefix optional)`, eventType, 'completed')
    .option('--usage <dimension=n>', 'reported usage, e.g. input_tokens=1200 (repeatable; completed and usage_corrected need it)', collectPairs(wholeNumber))
    .option('--correction <n>', 'usage_corrected: the correction number', correction)
    .option('--id <webhook-id>', 'the event id, which is the event key (default: a random one); the same id and options again are a duplicate (already_accepted)')
    .option('--url <url>', 'the API (default $TALLY_URL, else http://127.0.0.1:$PORT, PORT default 8080)')
    .action(sendWebhook);
}
