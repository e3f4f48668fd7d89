/** Refusals at the webhook door, each with its CONTRACT.md status and code. */
export class WebhookRefused extends Error {
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
