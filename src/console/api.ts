import type { FastifyInstance } from 'fastify';

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  text: string;
  contentType: string;
}

/**
 * The console reads and acts through the public JSON API, in process (app.inject: no
 * socket, same auth, same scoping, same validation), with the signed-in credential.
 */
export class ConsoleApi {
  constructor(
    private readonly app: FastifyInstance,
    private readonly credential: string,
  ) {}

  async call<T = any>(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> {
    const answer = await this.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${this.credential}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
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

export type Role = { kind: 'admin' } | { kind: 'tenant'; tenantId: string | null };

/** Who a credential is: the admin (may list tenants), a tenant, or nobody (null). */
export async function roleOf(api: ConsoleApi): Promise<Role | null> {
  const tenants = await api.call('GET', '/v1/tenants?limit=1');
  if (tenants.status === 200) return { kind: 'admin' };
  if (tenants.status !== 403) return null;
  const wallets = await api.call<{ data: { tenant_id: string }[] }>('GET', '/v1/wallets?limit=1');
  return wallets.status === 200
    ? { kind: 'tenant', tenantId: wallets.body.data[0]?.tenant_id ?? null }
    : { kind: 'tenant', tenantId: null };
}
