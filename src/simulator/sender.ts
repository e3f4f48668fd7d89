import { backoff, sleep } from '../backoff.js';
import type { Delivery } from './deliveries.js';

/** Between a delivery's tries: from 100 ms, doubling to 2 s, uniform in [ceiling/2, ceiling]. */
const SENDER_RETRY_BACKOFF = { floorMs: 'half', firstMs: 100, capMs: 2_000 } as const;

export interface DeliveryResult {
  delivery: Delivery;
  status: number;
  answer: string | null;
  /** how many times it was sent (providers retry 5xx and network errors) */
  tries: number;
}

/** Runs async tasks with at most `limit` in flight. */
export class Limiter {
  private active = 0;
  private queue: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

const RETRYABLE_STATUS = (status: number) => status >= 500 || status === 429;

/**
 * Sends one delivery like a provider: waits its delay, posts, and retries with
 * backoff on 5xx, 429 and connection errors until it gets an answer (or gives up
 * after `maxTries`).
 */
export async function send(baseUrl: string, provider: string, delivery: Delivery, maxTries = 60): Promise<DeliveryResult> {
  if (delivery.delayMs > 0) await sleep(delivery.delayMs);
  for (let tries = 1; ; tries++) {
    try {
      const response = await fetch(`${baseUrl}/v1/webhooks/${provider}`, { method: 'POST', headers: delivery.headers, body: delivery.body });
      const text = await response.text();
      if (!RETRYABLE_STATUS(response.status) || tries >= maxTries) {
        let answer: string | null = null;
        try {
          const parsed = JSON.parse(text) as { status?: string; error?: { code?: string } };
          answer = parsed.status ?? parsed.error?.code ?? null;
        } catch {
          answer = null;
        }
        return { delivery, status: response.status, answer, tries };
      }
    } catch (error) {
      if (tries >= maxTries) return { delivery, status: 0, answer: (error as Error).message, tries };
    }
    // Providers back off between retries; the simulator does too, briefly.
    await sleep(backoff(tries, SENDER_RETRY_BACKOFF));
  }
}
