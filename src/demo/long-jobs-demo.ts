import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { sleep } from '../backoff.js';

/**
 * The long-running jobs part of `tally demo` (docs/long-running-jobs.md): a GPU-seconds job
 * whose hold grows twice as its progress reports come (each delivered twice) and then
 * completes, and one that runs out at max_limits, is cancelled by its tenant and captured
 * for the work done. Over the HTTP API and signed webhooks only; prints what happened and
 * whether the amounts are the contract's.
 */
export interface LongJobsDemoContext {
  baseUrl: string;
  adminToken: string;
  /** a generic provider of the demo, and its signing secret */
  provider: string;
  secret: string;
}

const MODEL = 'sim/render-gpu';
/** 0.002 per GPU-second */
const UNIT_PRICES = { gpu_seconds: '2000.00' };

interface JobAnswer {
  id: string;
  state: string;
  reserved: string;
  captured: string;
  released: string;
  limits: Record<string, number>;
  hold_exhausted: { reason: string | null; reserved: string; usage_price: string } | null;
  extensions: { version: number; amount: string; source: string }[];
  events: { state: string }[];
}

export async function runLongJobsDemo(context: LongJobsDemoContext): Promise<boolean> {
  const { baseUrl, adminToken, provider, secret } = context;
  const call = async (method: string, path: string, body: unknown, token = adminToken) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as any;
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const signer = new Webhook(secret);
  /** Each report twice under one webhook-id: the duplicate is absorbed and extends nothing. */
  const report = async (jobId: string, type: string, usage: Record<string, number>) => {
    const id = `msg_${randomUUID()}`;
    const body = JSON.stringify({ type, data: { job_id: jobId, usage } });
    for (let copy = 0; copy < 2; copy++) {
      const now = new Date();
      const headers = {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signer.sign(id, now, body),
      };
      const answer = await fetch(`${baseUrl}/v1/webhooks/${provider}`, { method: 'POST', headers, body });
      if (answer.status !== 200) throw new Error(`${type} for ${jobId}: ${answer.status} ${await answer.text()}`);
    }
  };
  const settled = async (jobId: string, token: string): Promise<JobAnswer> => {
    for (;;) {
      const job = (await call('GET', `/v1/jobs/${jobId}`, undefined, token)) as JobAnswer;
      if (job.events.every((e) => e.state !== 'pending' && e.state !== 'processing')) return job;
      // the workers settle the reports; there is nothing to await but the job's view
      await sleep(100);
    }
  };
  const line = (label: string, value: string | number) => console.log(`  ${label.padEnd(44)} ${value}`);

  console.log('\nLong-running jobs (holds that grow while the job runs)');
  await call('PUT', `/v1/prices/${encodeURIComponent(MODEL)}`, { currency: 'USD', unit_prices: UNIT_PRICES });
  const tenant = await call('POST', '/v1/tenants', { name: 'demo-render-farm' });
  const wallet = await call('POST', '/v1/wallets', { currency: 'USD' }, tenant.api_key);
  await call('POST', `/v1/wallets/${wallet.id}/credits`, { amount: '10.00', reference: 'demo top-up' });
  const submit = (max: number) =>
    call(
      'POST',
      '/v1/jobs',
      {
        wallet_id: wallet.id,
        model: MODEL,
        provider,
        limits: { gpu_seconds: 600 },
        auto_extend: { step: { gpu_seconds: 300 }, max_limits: { gpu_seconds: max } },
      },
      tenant.api_key,
    );

  // Grows twice (400 s → 900, 750 s → 1200), completes at 1100 s.
  const grows = await submit(1800);
  await report(grows.id, 'job.progress', { gpu_seconds: 400 });
  await report(grows.id, 'job.progress', { gpu_seconds: 750 });
  await report(grows.id, 'job.completed', { gpu_seconds: 1100 });
  const grown = await settled(grows.id, tenant.api_key);
  line('a job that grows: extensions', grown.extensions.map((x) => `#${x.version} +${x.amount}`).join(', '));
  line('  held, captured, released (USD)', `${grown.reserved}, ${grown.captured}, ${grown.released}`);

  // Runs out at max_limits (900 s) with 700 s done, is cancelled, and bills 880 s of work.
  const runsOut = await submit(900);
  await report(runsOut.id, 'job.progress', { gpu_seconds: 400 });
  await report(runsOut.id, 'job.progress', { gpu_seconds: 700 });
  const exhausted = await settled(runsOut.id, tenant.api_key);
  line(
    'a job that runs out: hold_exhausted',
    exhausted.hold_exhausted
      ? `${exhausted.hold_exhausted.reason}, usage ${exhausted.hold_exhausted.usage_price} of ${exhausted.hold_exhausted.reserved} held`
      : 'no',
  );
  await call('POST', `/v1/jobs/${runsOut.id}/cancel`, undefined, tenant.api_key);
  await report(runsOut.id, 'job.canceled', { gpu_seconds: 880 });
  const cancelled = await settled(runsOut.id, tenant.api_key);
  line('  cancelled, then captured, released', `${cancelled.captured}, ${cancelled.released}`);

  const exact =
    grown.state === 'captured' &&
    grown.extensions.length === 2 &&
    grown.reserved === '2.400000' &&
    grown.captured === '2.200000' &&
    exhausted.hold_exhausted?.reason === 'max_limits' &&
    exhausted.hold_exhausted.reserved === '1.800000' &&
    cancelled.state === 'captured' &&
    cancelled.captured === '1.760000' &&
    cancelled.released === '0.040000';
  console.log(exact ? '  Holds grew and ran out exactly as the contract says.' : '  Long-running jobs are NOT as the contract says.');
  return exact;
}
