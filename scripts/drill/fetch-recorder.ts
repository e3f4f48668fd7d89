/**
 * Every HTTP call the drill makes to Tally — the simulator's webhook deliveries, job
 * submissions, cancels, credits — goes through the global fetch; this wraps it once and
 * keeps every failed answer: a 5xx (with its error code) or a refused connection. That
 * is what "how many requests answered 503 during the failover" is counted from, whoever
 * made the request and however it retried. The operator's probes (/healthz, /metrics)
 * are not client requests and are left out.
 */

const PROBES = new Set(['/healthz', '/metrics']);

export interface FailedCall {
  /** ms since the epoch, when the answer (or the connection error) came */
  at: number;
  /** 0: no answer (connection refused or reset) */
  status: number;
  /** the error body's code (database_unavailable, …) or the connection error's message */
  code: string;
  what: string;
}

export class FetchRecorder {
  readonly failures: FailedCall[] = [];
  private restore: (() => void) | null = null;

  install(): void {
    const realFetch = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      const path = new URL(String(input instanceof Request ? input.url : input)).pathname;
      if (PROBES.has(path)) return realFetch(input, init);
      const what = `${init?.method ?? 'GET'} ${path}`;
      let response: Response;
      try {
        response = await realFetch(input, init);
      } catch (error) {
        this.failures.push({ at: Date.now(), status: 0, code: causeOf(error), what });
        throw error;
      }
      if (response.status >= 500) {
        const body = await response
          .clone()
          .text()
          .catch(() => '');
        this.failures.push({ at: Date.now(), status: response.status, code: errorCode(body), what });
      }
      return response;
    };
    this.restore = () => (globalThis.fetch = realFetch);
  }

  uninstall(): void {
    this.restore?.();
  }

  /** The failures in [from, to). */
  between(from: number, to: number = Number.POSITIVE_INFINITY): FailedCall[] {
    return this.failures.filter((f) => f.at >= from && f.at < to);
  }
}

function errorCode(body: string): string {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? 'no_code';
  } catch {
    return 'not_json';
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** Failed calls by route, ids and provider names left out: `POST /v1/jobs/:id/cancel`. */
export function countByRoute(failures: FailedCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of failures) {
    const route = f.what.replace(/\/webhooks\/[^/]+/, '/webhooks/:provider').replace(/\/[0-9a-f]{8}-[0-9a-f-]{27}(?=\/|$)/gi, '/:id');
    counts[route] = (counts[route] ?? 0) + 1;
  }
  return counts;
}
