import type { FastifyBaseLogger } from 'fastify';
import type { IntakeStatus } from '../intake/receive.js';
import { WebhookRefused } from '../webhooks/errors.js';
import { ApiError } from './errors.js';
import { UNKNOWN_PROVIDER, type Metrics } from './metrics.js';

/**
 * What the webhook route does with intake's answer besides answering: count every
 * delivery by outcome and provider, and give every refusal one 'webhook refused' line
 * with its code and reason and whatever intake had identified (provider, event, job,
 * tenant). Accepted deliveries need no line of their own: the request's line has the
 * status, and the settlement gets its line when it commits.
 */
export function countAccepted(metrics: Metrics, provider: string, status: IntakeStatus): void {
  metrics.webhooks.inc({ outcome: status, provider });
}

/** Counts and logs a failed delivery; returns the error to answer with. */
export function refusal(log: FastifyBaseLogger, metrics: Metrics, requested: string, error: unknown): unknown {
  if (!(error instanceof WebhookRefused)) {
    // Not a refusal (the database is down, a bug): the error handler logs and answers it.
    metrics.webhooks.inc({ outcome: 'error', provider: UNKNOWN_PROVIDER });
    return error;
  }
  const { provider, ...about } = error.context;
  // The metric is labelled only by a configured provider (bounded); the log line names
  // whatever the path asked for.
  metrics.webhooks.inc({ outcome: error.code, provider: provider ?? UNKNOWN_PROVIDER });
  log.warn({ provider: provider ?? requested, status: error.status, code: error.code, reason: error.message, ...about }, 'webhook refused');
  return new ApiError(error.status, error.code, error.message);
}
