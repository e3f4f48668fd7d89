import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Random } from './random.js';
import type { ProviderEvent } from './scenarios.js';

export interface SimulatedJob {
  id: string;
  tenantId: string;
  model: string;
  currency: string;
}

export interface Delivery {
  jobId: string;
  eventId: string;
  body: string;
  headers: Record<string, string>;
  /** signed with a secret the provider does not have: must be refused with 401 */
  forged: boolean;
  /** milliseconds to wait before sending: reorders deliveries within a phase */
  delayMs: number;
  /** which logical event this is a copy of (for the naive-billing comparison) */
  logicalEvent: string;
  event: ProviderEvent;
}

export interface ChaosOptions {
  /** extra copies of a delivery under the same webhook-id */
  maxDuplicates: number;
  /** probability that an event is emitted again under a new webhook-id */
  reemitProbability: number;
  /** probability that a forged copy is sent alongside */
  forgeProbability: number;
  /** deliveries wait up to this long before sending */
  maxDelayMs: number;
}

export const DEFAULT_CHAOS: ChaosOptions = { maxDuplicates: 3, reemitProbability: 0.5, forgeProbability: 0.1, maxDelayMs: 50 };

const FORGERY_SECRET = `whsec_${Buffer.from('not-the-provider-secret-at-all!!').toString('base64')}`;

/**
 * The x-request-id of a delivery sent to be refused: this prefix, the refusal's code, ':',
 * the event id. The server keeps a caller's request id in its log lines, so whoever runs the
 * simulator against a server can tell the refusals it asked for from real ones (`tally demo`
 * counts the first and shows the second).
 */
const EXPECTED_REFUSAL_PREFIX = 'expect-refusal:';

function expectedRefusalId(code: string, eventId: string): string {
  return `${EXPECTED_REFUSAL_PREFIX}${code}:${eventId}`;
}

/** The code a request id says its delivery was sent to provoke, or null. */
export function expectedRefusalOf(requestId: unknown): string | null {
  if (typeof requestId !== 'string' || !requestId.startsWith(EXPECTED_REFUSAL_PREFIX)) return null;
  const code = requestId.slice(EXPECTED_REFUSAL_PREFIX.length).split(':')[0];
  return code ? code : null;
}

/** Every copy, re-emission and forgery of one logical provider event. */
export function deliveriesOf(job: SimulatedJob, event: ProviderEvent, secret: string, random: Random, chaos: ChaosOptions): Delivery[] {
  const logicalEvent = randomUUID();
  const copies: Delivery[] = [];
  const emit = (forged: boolean) => {
    const eventId = `msg_${randomUUID()}`;
    const body = JSON.stringify({
      type: event.type,
      timestamp: new Date().toISOString(),
      data: {
        job_id: job.id,
        tenant_id: job.tenantId,
        model: job.model,
        currency: job.currency,
        ...(event.usage ? { usage: event.usage } : {}),
        ...(event.correction ? { correction: event.correction } : {}),
        // Providers sometimes send a price; Tally must ignore it.
        amount: '999.99',
      },
    });
    const now = new Date();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(forged ? FORGERY_SECRET : secret).sign(eventId, now, body),
      ...(forged ? { 'x-request-id': expectedRefusalId('invalid_signature', eventId) } : {}),
    };
    const copy = (): Delivery => ({ jobId: job.id, eventId, body, headers, forged, delayMs: random.int(0, chaos.maxDelayMs), logicalEvent, event });
    copies.push(copy());
    if (!forged) for (let i = random.int(0, chaos.maxDuplicates); i > 0; i--) copies.push(copy());
  };
  emit(false);
  if (random.chance(chaos.reemitProbability)) emit(false);
  if (random.chance(chaos.forgeProbability)) emit(true);
  return copies;
}
