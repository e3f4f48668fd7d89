import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { Random } from './random.js';
import { percentiles, type LoadJob, type LoadMessage, type LoadPlan, type LoadReport } from './load-protocol.js';

/**
 * The provider side of the benchmark, in its own process so that its CPU is not the
 * server's: every job's completion is sent three times — once, again under the same
 * webhook-id (a duplicate), and re-emitted under a new webhook-id — signed with
 * Standard Webhooks, over keep-alive HTTP with `concurrency` requests in flight.
 * A job with progress reports (the growing scenario) first sends each of them once,
 * as `job.progress` with its cumulative usage, under its own webhook-id.
 * The deliveries are in a seeded random order; a job's keep their order.
 */

interface Delivery {
  id: string;
  body: string;
}

const MAX_TRIES = 20;
const PROGRESS_EVERY_MS = 250;

function send(message: LoadMessage): void {
  process.send?.(message);
}

/** Same body bytes for a duplicate (else it is a conflict); a re-emission is a new event id with its own body. */
function plan(jobs: LoadJob[], options: LoadPlan): Delivery[] {
  const event = (type: string, job: LoadJob, usage: Record<string, number>) =>
    JSON.stringify({
      type,
      timestamp: new Date().toISOString(),
      data: { job_id: job.id, tenant_id: job.tenantId, model: options.model, currency: options.currency, usage },
    });
  const completion = (job: LoadJob) => event('job.completed', job, job.usage);
  const perJob = jobs.map((job) => {
    const reports = (job.progress ?? []).map((usage): Delivery => ({ id: `msg_${randomUUID()}`, body: event('job.progress', job, usage) }));
    const original: Delivery = { id: `msg_${randomUUID()}`, body: completion(job) };
    const reemission: Delivery = { id: `msg_${randomUUID()}`, body: completion(job) };
    return [...reports, original, { ...original }, reemission];
  });
  // Shuffle slots, then give each job's slots to its deliveries in order.
  const slots = new Random(options.seed).shuffle(perJob.flatMap((deliveries, j) => deliveries.map(() => j)));
  const taken = new Array<number>(jobs.length).fill(0);
  return slots.map((j) => perJob[j]![taken[j]!++]!);
}

function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const retryable = (status: number) => status >= 500 || status === 429;

async function run(options: LoadPlan): Promise<LoadReport> {
  const jobs = JSON.parse(await readFile(options.jobsFile, 'utf8')) as LoadJob[];
  const deliveries = plan(jobs, options);
  const signer = new Webhook(options.secret);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const url = new URL(`/v1/webhooks/${options.provider}`, options.baseUrl);
  const statuses: Record<string, number> = {};
  const answers: Record<string, number> = {};
  const unexpected: string[] = [];
  const httpMs: number[] = [];
  let retries = 0;
  let done = 0;
  let ok = 0;
  let next = 0;
  let lastAnswerAt = 0;
  const progress = setInterval(() => send({ type: 'progress', done, ok }), PROGRESS_EVERY_MS);

  const deliver = async (delivery: Delivery) => {
    const started = performance.now();
    let status = 0;
    let text = '';
    for (let tries = 1; tries <= MAX_TRIES; tries++) {
      // Signed when sent, as a provider does (the timestamp must be fresh).
      const now = new Date();
      const headers = {
        'content-type': 'application/json',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signer.sign(delivery.id, now, delivery.body),
      };
      try {
        ({ status, text } = await post(agent, url, headers, delivery.body));
        if (!retryable(status)) break;
      } catch (error) {
        status = 0;
        text = (error as Error).message;
      }
      if (tries < MAX_TRIES) {
        retries++;
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 25 * 2 ** tries)));
      }
    }
    httpMs.push(performance.now() - started);
    lastAnswerAt = Date.now();
    statuses[status] = (statuses[status] ?? 0) + 1;
    let answer = `http_${status}`;
    try {
      const parsed = JSON.parse(text) as { status?: string; error?: { code?: string } };
      answer = parsed.status ?? parsed.error?.code ?? answer;
    } catch {
      // not JSON: keep the status
    }
    answers[answer] = (answers[answer] ?? 0) + 1;
    if (status === 200) ok++;
    else if (unexpected.length < 10) unexpected.push(`${delivery.id}: ${status} ${text.slice(0, 200)}`);
    done++;
  };

  const firstSendAt = Date.now();
  const lane = async () => {
    while (next < deliveries.length) {
      const index = next++;
      if (options.rate > 0) {
        const due = firstSendAt + (index * 1000) / options.rate;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      await deliver(deliveries[index]!);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  clearInterval(progress);
  agent.destroy();
  const cpu = process.cpuUsage();
  return {
    deliveries: deliveries.length,
    statuses,
    answers,
    retries,
    firstSendAt,
    lastAnswerAt,
    httpMs: percentiles(httpMs),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    unexpected,
  };
}

/** The last message, then let go of the channel once it is written. */
function finish(message: LoadMessage): void {
  process.send?.(message, () => process.disconnect());
}

process.once('message', (options: LoadPlan) => {
  run(options).then(
    (report) => finish({ type: 'done', report }),
    (error: unknown) => finish({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});

// The harness is gone (or done with us): nothing left to report to.
process.once('disconnect', () => process.exit(0));
