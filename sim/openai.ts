import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Usage } from './ops.js';

/**
 * The part of OpenAI's API Tally calls for a run: `GET /v1/responses/{id}`, answering the
 * response object the simulation set for that id (its status and usage), the way Tally's
 * OpenAI adapter fetches a job's usage before it settles. It can be told to fail the next
 * fetches (500) or to hold them unanswered, past Tally's fetch timeout: the usage fetch
 * faults of `--faults`.
 */

export const OPENAI_KEY = 'sk-sim-openai-0123456789abcdef';

type Status = 'completed' | 'failed' | 'cancelled';

/** How long a fault waits for a fetch to hit */
const FAULT_WINDOW_MS = 3_000;

export class SimOpenAi {
  private readonly responses = new Map<string, { status: Status; usage: Usage | null; model: string }>();
  private failing = 0;
  private holding = 0;
  private readonly held = new Set<ServerResponse>();
  /** fetches answered, failed and held so far */
  readonly counts = { answered: 0, failed: 0, held: 0 };

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<SimOpenAi> {
    let api: SimOpenAi | undefined;
    const server = createServer((request, response) => api!.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    api = new SimOpenAi(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return api;
  }

  /** What the response `id` is now: its status and usage (null: none, as a failed response may have). */
  set(id: string, status: Status, usage: Usage | null, model: string): void {
    this.responses.set(id, { status, usage, model });
  }

  /** The next `count` fetches within `windowMs` fail (a window, not a debt: fetches retried later are not starved by faults piling up). */
  failNext(count: number, windowMs = FAULT_WINDOW_MS): void {
    this.failing = count;
    setTimeout(() => (this.failing = 0), windowMs).unref();
  }

  /** The next fetch within `windowMs` is held unanswered. */
  holdNext(windowMs = FAULT_WINDOW_MS): void {
    this.holding = 1;
    setTimeout(() => (this.holding = 0), windowMs).unref();
  }

  /** Every held fetch is let go (answered 503), and no more are held or failed. */
  calm(): void {
    this.failing = 0;
    this.holding = 0;
    for (const response of this.held) answer(response, 503, { error: { message: 'held by the simulation' } });
    this.held.clear();
  }

  async close(): Promise<void> {
    this.calm();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const match = /^\/v1\/responses\/([^/?]+)$/.exec(request.url ?? '');
    if (request.method !== 'GET' || match === null) return answer(response, 404, { error: { message: 'not simulated' } });
    if (request.headers.authorization !== `Bearer ${OPENAI_KEY}`) return answer(response, 401, { error: { message: 'bad key' } });
    if (this.failing > 0) {
      this.failing--;
      this.counts.failed++;
      return answer(response, 500, { error: { message: 'the simulation fails this fetch' } });
    }
    if (this.holding > 0) {
      this.holding--;
      this.counts.held++;
      this.held.add(response);
      response.on('close', () => this.held.delete(response));
      return;
    }
    const id = decodeURIComponent(match[1]!);
    const found = this.responses.get(id);
    if (found === undefined) return answer(response, 404, { error: { message: `no response ${id}` } });
    this.counts.answered++;
    const { usage } = found;
    answer(response, 200, {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: found.status,
      model: found.model,
      output: [],
      usage:
        usage === null
          ? null
          : {
              input_tokens: (usage.input_tokens ?? 0) + (usage.cached_input_tokens ?? 0),
              input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
              output_tokens: usage.output_tokens ?? 0,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: (usage.input_tokens ?? 0) + (usage.cached_input_tokens ?? 0) + (usage.output_tokens ?? 0),
            },
    });
  }
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  if (response.writableEnded) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
