import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

/** One request a receiver got, as it arrived. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  /** parsed JSON body, or null */
  json: any;
  path: string;
}

/** What to do with a request: answer it, or leave it hanging (until the receiver closes). */
export type Behaviour = (
  request: Received,
  index: number,
) => { status: number; body?: string; headers?: Record<string, string>; stream?: number } | 'hang';

/**
 * A real HTTP receiver on 127.0.0.1 for outbound webhook tests: records every request and
 * answers as `behaviour` says. `waitFor` resolves when the recorded requests satisfy a
 * condition — checked at every arrival, no polling, no sleeps; the timeout only bounds a
 * failure.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** for streamed answers: whether the whole body was written before the client hung up */
  readonly streams: { finished: boolean; written: number }[] = [];
  private readonly arrivals = new EventEmitter();
  private readonly server: http.Server;
  private readonly hanging = new Set<ServerResponse>();
  port = 0;

  constructor(public behaviour: Behaviour = () => ({ status: 200, body: 'ok' })) {
    this.arrivals.setMaxListeners(1000);
    this.server = http.createServer((req, res) => this.handle(req, res));
    afterAll(() => this.close());
  }

  static async start(behaviour?: Behaviour): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(behaviour);
    await receiver.listen(0);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens on `port` (0: a free one, kept for later reopenings). */
  async listen(port = this.port): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting connections (the receiver is "down"); hanging requests are cut. */
  async down(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves once `condition` holds on the requests received so far. */
  waitFor(condition: (received: Received[]) => boolean, timeoutMs = 30_000): Promise<void> {
    if (condition(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition(this.received)) return;
        clearTimeout(timer);
        this.arrivals.off('request', check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.arrivals.off('request', check);
        reject(new Error(`the receiver's condition was not met within ${timeoutMs} ms (${this.received.length} requests received)`));
      }, timeoutMs);
      this.arrivals.on('request', check);
    });
  }

  /** Requests carrying this webhook-id. */
  withId(id: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === id);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        // not JSON
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      const received: Received = { headers, body, json, path: req.url ?? '/' };
      const index = this.received.length;
      this.received.push(received);
      const answer = this.behaviour(received, index);
      if (answer === 'hang') {
        this.hanging.add(res);
        res.on('close', () => this.hanging.delete(res));
      } else if (answer.stream !== undefined) {
        this.stream(res, answer.status, answer.stream);
      } else {
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
      }
      this.arrivals.emit('request');
    });
  }

  /** Writes `bytes` of body as fast as the client reads, noting whether it all went out. */
  private stream(res: ServerResponse, status: number, bytes: number): void {
    const record = { finished: false, written: 0 };
    this.streams.push(record);
    res.writeHead(status, { 'content-type': 'text/plain' });
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const pump = () => {
      while (record.written < bytes) {
        record.written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end(() => (record.finished = true));
    };
    res.on('error', () => {});
    pump();
  }
}
