import { createServer, type Server } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metrics } from '../api/metrics.js';

/**
 * `tally worker --metrics-port N`: the worker's Prometheus metrics (its settle latency,
 * its statements, the queue) on GET /metrics, bearer TALLY_METRICS_TOKEN when set, as
 * on `tally serve`. node:http rather than Fastify: one route, no body, no schema.
 */
export async function serveWorkerMetrics(metrics: Metrics, port: number, host: string, token: string | null): Promise<Server> {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type });
      response.end(body);
    };
    const error = (status: number, code: string, message: string) =>
      send(status, 'application/json', JSON.stringify({ error: { code, message } }));
    if (path !== '/metrics') return error(404, 'not_found', 'the worker serves GET /metrics only');
    if (request.method !== 'GET' && request.method !== 'HEAD') return error(405, 'method_not_allowed', 'GET /metrics');
    if (token) {
      const given = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!timingSafeEqual(digest(given), digest(token))) return error(401, 'unauthorized', 'send Authorization: Bearer $TALLY_METRICS_TOKEN');
    }
    metrics.registry.metrics().then(
      (body) => send(200, metrics.registry.contentType, body),
      (err: unknown) => error(503, 'metrics_unavailable', `could not collect metrics: ${err instanceof Error ? err.message : String(err)}`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
