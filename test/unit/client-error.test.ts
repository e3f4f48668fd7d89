import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clientError } from '../../src/api/errors.js';

/**
 * A request Node's parser refuses (here: headers over its 16 KiB limit) is answered
 * before its body has been read. The answer must reach a client that is still sending:
 * the server reads and drops the rest (a lingering close) instead of closing a socket
 * with unread data, which the kernel turns into a reset that makes the client's write
 * fail with EPIPE and lose the answer (the HTTP fuzz test's flake, issue 24).
 */
let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((_request, response) => response.end('unreachable'));
  server.on('clientError', clientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const head = (bodyLength: number) =>
  Buffer.from(
    `POST /v1/events/p/${'k'.repeat(20_000)}/retry HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${bodyLength}\r\n\r\n`,
  );

interface Exchange {
  answer: string;
  clientError?: string;
  /** what the server's socket had read when it closed */
  serverRead: number;
  sent: number;
}

/** Writes head and body at once, as the fuzz client does, and waits for both sides to close. */
async function oversizedRequest(bodyLength: number): Promise<Exchange> {
  const request = Buffer.concat([head(bodyLength), Buffer.alloc(bodyLength, 'x')]);
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
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

it('reads and drops the whole body of a refused request before closing (a lingering close)', async () => {
  for (let round = 0; round < 5; round++) {
    const exchange = await oversizedRequest(1_800_000);
    expect(exchange.answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(exchange.clientError).toBeUndefined();
    expect(exchange.serverRead).toBe(exchange.sent);
  }
});

it('answers in the usual error shape', async () => {
  const { answer } = await oversizedRequest(10);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
  expect(body.error.code).toBe('headers_too_large');
});

it('cuts a client that goes on sending beyond the bound', async () => {
  const exchange = await oversizedRequest(8 * 1024 * 1024);
  expect(exchange.serverRead).toBeLessThan(exchange.sent);
});
