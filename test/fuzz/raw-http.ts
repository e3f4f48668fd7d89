import { connect } from 'node:net';
import type { FuzzAnswer, FuzzRequest, Transport } from './transport.js';

/**
 * HTTP/1.1 over a plain socket, bytes exactly as written: duplicated or folded headers,
 * a Content-Length that lies, chunked bodies, control characters — what Node's own
 * parser sees before Fastify does. One connection per request (Connection: close).
 */
export const WIRE_DAMAGE = [
  'none',
  'duplicate-content-type',
  'duplicate-authorization',
  'duplicate-idempotency-key',
  'duplicate-webhook-headers',
  'chunked',
  'chunked-and-length',
  'short-content-length',
  'negative-content-length',
  'two-content-lengths',
  'obs-fold',
  'control-char-in-header',
  'space-in-header-name',
  'huge-header',
  'lowercase-method',
  'absolute-form',
  'raw-utf8-path',
  'http-1.0',
  'expect-continue',
  'no-host',
  'header-without-colon',
] as const;
export type WireDamage = (typeof WIRE_DAMAGE)[number];

export interface WireRequest extends FuzzRequest {
  wire?: WireDamage;
}

function headerLines(headers: FuzzRequest['headers']): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
  }
  return lines;
}

export function encodeRequest(request: WireRequest, host: string): Buffer {
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  const wire = request.wire ?? 'none';
  let method = request.method;
  let target = request.url;
  let version = 'HTTP/1.1';
  const lines = headerLines(request.headers).map((l) => Buffer.from(l, 'latin1').toString('latin1'));
  // Header values travel as UTF-8 bytes where they hold non-Latin-1 text.
  const extra: string[] = [];
  let length: string[] = [`content-length: ${body.length}`];
  let payload = body;
  switch (wire) {
    case 'duplicate-content-type':
      extra.push('content-type: text/plain', 'content-type: application/json');
      break;
    case 'duplicate-authorization':
      extra.push('authorization: Bearer wrong');
      break;
    case 'duplicate-idempotency-key':
      extra.push('idempotency-key: other-key-1', 'idempotency-key: other-key-2');
      break;
    case 'duplicate-webhook-headers':
      extra.push('webhook-id: msg_dup', 'webhook-timestamp: 1', 'webhook-signature: v1,AAAA');
      break;
    case 'chunked': {
      length = ['transfer-encoding: chunked'];
      const half = Math.floor(body.length / 2);
      const chunk = (b: Buffer) =>
        b.length ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]) : Buffer.alloc(0);
      payload = Buffer.concat([chunk(body.subarray(0, half)), chunk(body.subarray(half)), Buffer.from('0\r\n\r\n')]);
      break;
    }
    case 'chunked-and-length':
      length.push('transfer-encoding: chunked');
      break;
    case 'short-content-length':
      length = [`content-length: ${Math.max(0, body.length - 3)}`];
      break;
    case 'negative-content-length':
      length = ['content-length: -1'];
      break;
    case 'two-content-lengths':
      length.push(`content-length: ${body.length + 1}`);
      break;
    case 'obs-fold':
      extra.push('x-folded: first', ' continued');
      break;
    case 'control-char-in-header':
      extra.push('x-ctl: a\u0001b\u007f');
      break;
    case 'space-in-header-name':
      extra.push('x bad: 1');
      break;
    case 'huge-header':
      extra.push(`x-huge: ${'h'.repeat(20_000)}`);
      break;
    case 'lowercase-method':
      method = method.toLowerCase();
      break;
    case 'absolute-form':
      target = `http://${host}${target}`;
      break;
    case 'raw-utf8-path':
      target = `${target}é💸`;
      break;
    case 'http-1.0':
      version = 'HTTP/1.0';
      break;
    case 'expect-continue':
      extra.push('expect: 100-continue');
      break;
    case 'no-host':
      break;
    case 'header-without-colon':
      extra.push('x-no-colon');
      break;
  }
  const head = [
    `${method} ${target} ${version}`,
    ...(wire === 'no-host' ? [] : [`host: ${host}`]),
    'connection: close',
    ...lines,
    ...extra,
    ...length,
  ].join('\r\n');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'utf8'), payload]);
}

/** Status, headers and body of a raw response (Content-Length, chunked, or until close). */
export function decodeResponse(raw: Buffer): FuzzAnswer {
  const split = raw.indexOf('\r\n\r\n');
  const head = (split < 0 ? raw : raw.subarray(0, split)).toString('latin1');
  let rest = split < 0 ? Buffer.alloc(0) : raw.subarray(split + 4);
  const [statusLine, ...headerLines] = head.split('\r\n');
  // A 100 Continue precedes the real answer.
  if (/^HTTP\/1\.[01] 100/.test(statusLine ?? '')) return decodeResponse(rest);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = rest.indexOf('\r\n');
      const size = parseInt(rest.subarray(0, eol).toString(), 16);
      if (!(size > 0)) break;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      rest = rest.subarray(eol + 2 + size + 2);
    }
    rest = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    rest = rest.subarray(0, Number(headers['content-length']));
  }
  const text = rest.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return {
    status,
    text: status === 0 ? `(no HTTP answer: ${JSON.stringify(raw.subarray(0, 200).toString('latin1'))})` : text,
    json,
    headers,
  };
}

export function rawHttpTransport(baseUrl: string): Transport {
  const { hostname, port } = new URL(baseUrl);
  const host = `${hostname}:${port}`;
  return (request) =>
    new Promise<FuzzAnswer>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) });
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', (error: NodeJS.ErrnoException) => {
        // The server may answer and close before it has read the whole request.
        if (chunks.length > 0 && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) resolve(decodeResponse(Buffer.concat(chunks)));
        else reject(error);
      });
      socket.on('close', () => resolve(decodeResponse(Buffer.concat(chunks))));
      // write, not end: a half-closed socket makes Node abort the request before it answers.
      socket.write(encodeRequest(request as WireRequest, host));
    });
}
