import type { Backoff } from './app.js';

/**
 * Tally's HTTP API as a client sees it: JSON in, JSON out, any status returned. And the
 * client's side of a failover: a 5xx, a refused connection or 409
 * idempotency_key_in_use is retried with backoff under the same Idempotency-Key — the
 * same request again, never a new one — until it gets a real answer.
 */

export interface Answer {
  status: number;
  body: any;
}

export type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>;

export function client(baseUrl: string, token: string): Call {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // keep the text
    }
    return { status: response.status, body: parsed };
  };
}

/** From 100 ms doubling to 1 s, at least half of each ceiling: a client backing off, as providers do. */
const CLIENT_RETRY = { floorMs: 'half', firstMs: 100, capMs: 1_000 } as const;
/** A failover longer than this is a failed drill, not something to wait out. */
const GIVE_UP_AFTER_MS = 120_000;

export async function untilAnswered(retry: Backoff, call: () => Promise<Answer>): Promise<Answer> {
  const deadline = Date.now() + GIVE_UP_AFTER_MS;
  for (let tries = 1; ; tries++) {
    const answer = await call().catch((error: Error) => ({ status: 0, body: error.message }));
    const again =
      answer.status === 0 || answer.status >= 500 || (answer.status === 409 && answer.body?.error?.code === 'idempotency_key_in_use');
    if (!again || Date.now() > deadline) return answer;
    await retry.sleep(retry.backoff(tries, CLIENT_RETRY));
  }
}

/** An answer that must be 2xx during setup (nothing is failing yet). */
export function expectCreated(what: string, answer: Answer): any {
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}
