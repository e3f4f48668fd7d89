import Fastify, { type FastifyInstance } from 'fastify';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { installErrorHandler } from '../../src/api/errors.js';
import { BODY_LIMIT_BYTES } from '../../src/api/limits.js';

/**
 * A body over the limit is refused (413 payload_too_large) before it is read. Fastify then
 * closes the connection, and a socket closed with unread data is reset by the kernel: a
 * client still sending its body had its write fail with EPIPE and lost the answer (the HTTP
 * fuzz test in CI, a 1.8 MB body to /v1/reconciliation/exceptions/:id/resolve). The body is
 * read and dropped first, up to a bound, so the answer arrives.
 */
let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  app = Fastify({ bodyLimit: BODY_LIMIT_BYTES });
  installErrorHandler(app);
  app.post('/echo', async (request) => ({ got: request.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(() => app.close());

interface Exchange {
  answer: string;
  clientError?: string;
  serverRead: number;
  sent: number;
}

/** Writes head and body at once, as the fuzz client does, and waits for both sides to close. */
async function oversizedRequest(bodyLength: number, form: 'length' | 'chunked' = 'length'): Promise<Exchange> {
  const body = Buffer.alloc(bodyLength, 'x');
  const framing =
    form === 'length' ? `content-length: ${bodyLength}` : 'transfer-encoding: chunked';
  const head = Buffer.from(
    `POST /echo HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`,
  );
  const payload = form === 'length' ? body : Buffer.concat([Buffer.from(`${bodyLength.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
  const request = Buffer.concat([head, payload]);
  const accepted = new Promise<Socket>((resolve) => app.server.once('connection', resolve));
  const socket = connect({ host: '127.0.0.1', port });
  const serverSocket = await accepted;
  const serverClosed = new Promise<number>((resolve) => serverSocket.once('close', () => resolve(serverSocket.bytesRead)));
  const chunks: Buffer[] = [];
  let clientError: string | undefined;
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('error', (error: NodeJS.ErrnoException) => (clientError = error.code));
  const clientClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(request);
  await clientClosed;
  return { answer: Buffer.concat(chunks).toString('latin1'), clientError, serverRead: await serverClosed, sent: request.length };
}

it('answers 413 payload_too_large to a client still sending a body over the limit, after reading and dropping it', async () => {
  for (let round = 0; round < 10; round++) {
    const exchange = await oversizedRequest(1_800_000);
    expect(exchange.clientError).toBeUndefined();
    expect(exchange.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(exchange.answer.slice(exchange.answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { code: 'payload_too_large' },
    });
    expect(exchange.serverRead).toBe(exchange.sent);
  }
});

it('does the same for a chunked body over the limit', async () => {
  const exchange = await oversizedRequest(1_800_000, 'chunked');
  expect(exchange.clientError).toBeUndefined();
  expect(exchange.answer).toMatch(/^HTTP\/1\.1 413 /);
});

it('cuts a client that goes on sending beyond the bound', async () => {
  const exchange = await oversizedRequest(8 * 1024 * 1024);
  expect(exchange.serverRead).toBeLessThan(exchange.sent);
});
