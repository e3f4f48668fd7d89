import type { FastifyInstance } from 'fastify';
import { asPrincipal, type Principal } from '../principal.js';

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  text: string;
  contentType: string;
}

/**
 * The console reads and acts through the public JSON API, in process (app.inject: no
 * socket, same auth, same scoping, same validation), as the session's principal. It holds
 * no credential: each call carries a one-call ticket for the principal
 * (src/principal.ts explains why that, and why nothing outside can use it).
 */
export class ConsoleApi {
  constructor(
    private readonly app: FastifyInstance,
    private readonly principal: Principal,
  ) {}

  async call<T = any>(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> {
    const answer = await asPrincipal(this.principal, (ticket) =>
      this.app.inject({
        method,
        url,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
          ...ticket,
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      }),
    );
    const contentType = String(answer.headers['content-type'] ?? '');
    let parsed: unknown = null;
    if (contentType.includes('json')) parsed = answer.json();
    return { status: answer.statusCode, body: parsed as T, text: answer.body, contentType };
  }

  async get<T = any>(url: string): Promise<T> {
    const answer = await this.call<T>('GET', url);
    if (answer.status !== 200) throw new ConsoleApiError(answer);
    return answer.body;
  }
}

/** An API answer a page cannot show: rendered as the error page with the API's own message. */
export class ConsoleApiError extends Error {
  constructor(readonly answer: ApiAnswer) {
    super((answer.body as { error?: { message?: string } })?.error?.message ?? `the API answered ${answer.status}`);
    this.name = 'ConsoleApiError';
  }
}

/** Who is signed in: the admin (everything) or a tenant (its own wallets and jobs). */
export type Role = { kind: 'admin' } | { kind: 'tenant'; tenantId: string };
