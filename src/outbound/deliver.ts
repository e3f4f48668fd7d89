import http from 'node:http';
import https from 'node:https';
import {
  checkUrl,
  DestinationRefused,
  guardedLookup,
  InvalidDestinationUrl,
  type DestinationPolicy,
  type Resolver,
} from './destinations.js';
import { signatureHeader } from './signing.js';

/**
 * One delivery attempt: one signed HTTP POST, outside any transaction, never longer than
 * its timeout. Redirects are not followed (a 3xx is a failure: following one would let
 * any public host bounce Tally to a private one, and a receiver that moved should update
 * its endpoint); the answer's body is read up to 64 KiB and its first 1 KiB kept for the
 * attempt log. A 2xx is a delivery; anything else, or no answer, is a failure to retry.
 */

/** Most of an answer's body read; the rest is cut off (a receiver should answer fast and short). */
export const RESPONSE_READ_LIMIT_BYTES = 64 * 1024;
/** What the attempt log keeps of an answer's body. */
export const RESPONSE_EXCERPT_BYTES = 1024;
const USER_AGENT = 'Tally-Webhooks/1 (+https://www.standardwebhooks.com)';

export interface OutgoingMessage {
  url: string;
  /** the webhook-id: the message's id */
  messageId: string;
  /** the JSON body, signed as these exact bytes */
  body: string;
  /** the endpoint's active secrets: one, or two during a rotation's grace period */
  secrets: readonly string[];
}

export interface DeliverOptions {
  policy: DestinationPolicy;
  timeoutMs: number;
  /** DNS, replaceable in tests (a host re-pointed between checks) */
  resolver?: Resolver;
}

export interface AttemptResult {
  startedAt: Date;
  /** the answer's status; null when none came */
  status: number | null;
  latencyMs: number;
  /** the first 1 KiB of the answer's body */
  excerpt: string | null;
  /** why it failed, when it did */
  error: string | null;
  delivered: boolean;
}

export async function deliver(message: OutgoingMessage, options: DeliverOptions): Promise<AttemptResult> {
  const startedAt = new Date();
  const started = performance.now();
  const finish = (fields: { status: number | null; excerpt: string | null; error: string | null }): AttemptResult => ({
    startedAt,
    ...fields,
    latencyMs: Math.round(performance.now() - started),
    delivered: fields.error === null && fields.status !== null && fields.status >= 200 && fields.status < 300,
  });
  let url: URL;
  try {
    url = checkUrl(message.url, options.policy);
  } catch (error) {
    if (error instanceof DestinationRefused || error instanceof InvalidDestinationUrl)
      return finish({ status: null, excerpt: null, error: `destination refused: ${error.message}` });
    throw error;
  }
  const timestamp = new Date();
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(message.body)),
    'user-agent': USER_AGENT,
    'webhook-id': message.messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatureHeader(message.secrets, message.messageId, timestamp, message.body),
  };
  const answer = await post(url, headers, message.body, options);
  return finish(answer);
}

interface Answer {
  status: number | null;
  excerpt: string | null;
  error: string | null;
}

function post(url: URL, headers: Record<string, string>, body: string, options: DeliverOptions): Promise<Answer> {
  return new Promise((resolve) => {
    const transport = url.protocol === 'https:' ? https : http;
    let settled = false;
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let read = 0;
    // Once the status line came, an answer whose body then stalls or breaks off is still
    // that answer (the receiver has decided; only its body was cut short): `error` is for
    // failures before any status.
    const done = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (status === null) return resolve({ status, excerpt: null, error: error ?? 'no answer' });
      const redirect =
        status >= 300 && status < 400 ? `redirect not followed (${status}${location ? `, location ${location}` : ''})` : null;
      resolve({ status, excerpt: excerptOf(Buffer.concat(chunks)), error: redirect });
    };
    let location: string | undefined;
    const request = transport.request(url, {
      method: 'POST',
      headers,
      // A new connection per attempt, made by guardedLookup to the address it checked:
      // a pooled socket would skip the check.
      agent: false,
      lookup: guardedLookup(options.policy, options.resolver),
    });
    const timer = setTimeout(() => done(`no answer within ${options.timeoutMs} ms`), options.timeoutMs);
    request.on('response', (response) => {
      status = response.statusCode ?? null;
      location = typeof response.headers.location === 'string' ? response.headers.location.slice(0, 200) : undefined;
      response.on('data', (chunk: Buffer) => {
        const room = RESPONSE_READ_LIMIT_BYTES - read;
        if (room > 0) chunks.push(chunk.subarray(0, room));
        read += chunk.length;
        if (read >= RESPONSE_READ_LIMIT_BYTES) done(null);
      });
      response.on('end', () => done(null));
      response.on('error', () => done(null));
      response.on('aborted', () => done(null));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof DestinationRefused) return done(`destination refused: ${error.message}`);
      done(error.message || error.code || 'connection failed');
    });
    request.end(body);
  });
}

/** The first 1 KiB of a body as text, without NUL characters (PostgreSQL text cannot hold them). */
function excerptOf(body: Buffer): string {
  return body
    .subarray(0, RESPONSE_EXCERPT_BYTES)
    .toString('utf8')
    .replace(/\u0000/g, '');
}
