import type { FastifyInstance } from 'fastify';

/** One request as the fuzzer builds it: the path is sent exactly as written. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
}

export interface FuzzAnswer {
  status: number;
  text: string;
  json: unknown;
  headers: Record<string, unknown>;
}

export type Transport = (request: FuzzRequest) => Promise<FuzzAnswer>;

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** Fastify's inject: the whole stack from routing on, without a socket (fast). */
export function injectTransport(app: FastifyInstance): Transport {
  return async (request) => {
    const response = await app.inject({
      method: request.method as 'POST',
      url: request.url,
      headers: request.headers,
      ...(request.body !== undefined ? { payload: request.body } : {}),
    });
    return { status: response.statusCode, text: response.body, json: parse(response.body), headers: response.headers };
  };
}

/** Plain JSON calls for seeding the world. */
export async function call(
  transport: Transport,
  method: string,
  url: string,
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<FuzzAnswer> {
  return transport({
    method,
    url,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}
