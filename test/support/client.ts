import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ADMIN_TOKEN } from './server.js';

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A thin HTTP client for tests: JSON in, JSON out, any status returned (never thrown). */
export class Client {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null = ADMIN_TOKEN,
  ) {}

  as(token: string | null): Client {
    return new Client(this.baseUrl, token);
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // keep the text
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, body ?? {}, headers);
  }
}

export const TEST_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export interface SignedDelivery {
  body: string;
  headers: Record<string, string>;
}

/** Signs a body like a Standard Webhooks sender (the reference package's own sign()). */
export function signDelivery(body: unknown, options: { id?: string; secret?: string; timestamp?: Date } = {}): SignedDelivery {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? new Date();
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const signature = new Webhook(options.secret ?? TEST_SECRET).sign(id, timestamp, raw);
  return {
    body: raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

export async function deliver(baseUrl: string, provider: string, delivery: SignedDelivery): Promise<Answer> {
  const response = await fetch(`${baseUrl}/v1/webhooks/${provider}`, { method: 'POST', headers: delivery.headers, body: delivery.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body, headers: response.headers };
}
