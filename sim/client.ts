import { Webhook } from 'standardwebhooks';

/**
 * How the simulation talks to Tally: as a client that retries what a fault interrupted —
 * a refused or reset connection, a 503 while the database is away — with the same
 * Idempotency-Key or the same webhook-id, the way the contract tells clients and
 * providers to. Any other answer is Tally's and goes to the model.
 */

export interface Reply {
  status: number;
  body: any;
}

const RETRY_FOR_MS = 120_000;

async function retrying(send: () => Promise<Response>): Promise<Reply> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await send();
      const text = await response.text();
      const body = text ? JSON.parse(text) : null;
      if (response.status !== 503 || Date.now() > deadline) return { status: response.status, body };
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`no answer for ${RETRY_FOR_MS / 1000} s: ${(error as Error).message}`);
    }
    // a restart takes a second or two: back off from 50 ms to 1 s
    await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
  }
}

export class Api {
  constructor(private readonly baseUrl: () => string) {}

  call(method: string, path: string, token: string, body?: unknown, key?: string): Promise<Reply> {
    return retrying(() =>
      fetch(`${this.baseUrl()}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(key ? { 'idempotency-key': key } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
  }

  /** One Stripe event to Tally's endpoint, signed afresh by `sign` at each attempt. */
  stripe(payload: string, sign: () => string): Promise<Reply> {
    return retrying(() =>
      fetch(`${this.baseUrl()}/v1/payments/stripe/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': sign() },
        body: payload,
      }),
    );
  }

  /** One signed delivery (a forged one is signed with another secret); retried with a fresh timestamp. */
  deliver(provider: string, secret: string, id: string, body: string): Promise<Reply> {
    const signer = new Webhook(secret);
    return retrying(() => {
      const now = new Date();
      return fetch(`${this.baseUrl()}/v1/webhooks/${provider}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign(id, now, body),
        },
        body,
      });
    });
  }
}
