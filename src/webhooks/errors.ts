/**
 * What intake had identified when it refused a delivery, for the refusal's log line and
 * metrics. `provider` is set only once a configured provider was found; the event id
 * only once the signature was verified (an unverified header is nobody's word).
 */
export interface RefusalContext {
  provider?: string;
  event_id?: string;
  job_id?: string;
  tenant_id?: string;
}

/** Refusals at the webhook door, each with its CONTRACT.md status and code. */
export class WebhookRefused extends Error {
  readonly context: RefusalContext = {};

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookRefused';
  }
}

export const invalidSignature = (why: string) => new WebhookRefused(401, 'invalid_signature', `signature verification failed: ${why}`);
export const invalidPayload = (why: string) => new WebhookRefused(400, 'invalid_payload', why);
