import { sleep } from '../backoff.js';
import { CommandFailed, callApi, type ApiOptions } from './api-client.js';

/**
 * `tally jobs wait ID`: a webhook's 2xx means accepted, not settled; the worker settles
 * it a moment later. There is no push to wait on, so this polls the job view until the
 * job is where it was asked to be, and stops early when it cannot get there. `settled`:
 * every event accepted so far is settled, whatever the job's state (a running job's
 * progress reports, with the extensions they made).
 */
export const WAIT_STATES = ['captured', 'released', 'terminal', 'settled'] as const;
export type WaitState = (typeof WAIT_STATES)[number];

const POLL_INTERVAL_MS = 200;
const TERMINAL = new Set(['captured', 'released']);

interface JobAnswer {
  id: string;
  state: string;
  events?: { event_key: string; state: string; error_code?: string | null }[];
}

export interface WaitOptions extends ApiOptions {
  state: WaitState;
  timeout: number;
}

export async function waitForJob(id: string, options: WaitOptions): Promise<JobAnswer> {
  const deadline = Date.now() + options.timeout * 1000;
  for (;;) {
    const job = (await callApi(options, { caller: 'either', method: 'GET', path: `/v1/jobs/${encodeURIComponent(id)}` })) as JobAnswer;
    if (options.state === 'settled' ? settledEvents(job) : options.state === 'terminal' ? TERMINAL.has(job.state) : job.state === options.state)
      return job;
    if (TERMINAL.has(job.state) && options.state !== 'settled') throw new CommandFailed('job_ended', `job ${id} ended ${job.state}, not ${options.state}`);
    // A dead-lettered event waits for an operator (retry or discard), not for time.
    const dead = job.events?.find((e) => e.state === 'dead');
    if (dead) {
      throw new CommandFailed('event_dead', `job ${id} is ${job.state}: its event ${dead.event_key} is dead-lettered (${dead.error_code ?? 'no error code'}); see tally jobs show ${id}`);
    }
    if (Date.now() >= deadline) throw new CommandFailed('wait_timeout', `job ${id} is still ${job.state} after ${options.timeout} s`);
    await sleep(POLL_INTERVAL_MS);
  }
}

function settledEvents(job: JobAnswer): boolean {
  return (job.events ?? []).every((e) => e.state !== 'pending' && e.state !== 'processing');
}
