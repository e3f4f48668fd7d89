import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

/**
 * A provider's API in the test process (node:http): each path answers a script of steps,
 * in order, the last one repeating. A `HeldAnswer` step keeps the request open until the
 * test answers it, so the test can look at the database while the worker is waiting — or
 * never answers it, so the worker's fetch times out.
 */
export class HeldAnswer {
  private arrivedResolve!: () => void;
  private abortedResolve!: () => void;
  /** resolves when the worker's request has arrived */
  readonly arrived = new Promise<void>((resolve) => (this.arrivedResolve = resolve));
  /** resolves when the worker gave up on the request (its timeout) */
  readonly aborted = new Promise<void>((resolve) => (this.abortedResolve = resolve));
  private response: ServerResponse | null = null;

  /** @internal */
  attach(response: ServerResponse): void {
    this.response = response;
    response.on('close', () => {
      if (!response.writableEnded) this.abortedResolve();
    });
    this.arrivedResolve();
  }

  answer(status: number, body: unknown): void {
    if (!this.response) throw new Error('the request has not arrived yet');
    writeJson(this.response, status, body);
  }
}

export type Step = { status: number; body?: unknown } | HeldAnswer;

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

export class FakeProviderApi {
  readonly requests: RecordedRequest[] = [];
  private readonly scripts = new Map<string, Step[]>();

  private constructor(readonly url: string, private readonly close: () => Promise<void>) {}

  /** Starts on a free port; closed after the test file. */
  static async start(): Promise<FakeProviderApi> {
    let api: FakeProviderApi;
    const server = createServer((request, response) => api.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    api = new FakeProviderApi(`http://127.0.0.1:${port}`, () => new Promise((resolve) => server.close(() => resolve())));
    afterAll(async () => {
      server.closeAllConnections();
      await api.close();
    });
    return api;
  }

  /** What `path` answers, request after request (the last step repeats). */
  script(path: string, ...steps: Step[]): void {
    this.scripts.set(path, steps);
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const path = request.url ?? '/';
    this.requests.push({ method: request.method ?? 'GET', path, authorization: request.headers.authorization });
    const steps = this.scripts.get(path);
    if (!steps || steps.length === 0) return writeJson(response, 404, { error: { message: `no script for ${path}` } });
    const step = steps.length > 1 ? steps.shift()! : steps[0]!;
    if (step instanceof HeldAnswer) {
      step.attach(response);
      return;
    }
    writeJson(response, step.status, step.body ?? {});
  }
}

function writeJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
