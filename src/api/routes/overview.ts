import { Type } from '@sinclair/typebox';
import { attentionCounts, settlementSeries } from '../../ledger/index.js';
import { requireAccess, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { bearerAuth, errors } from '../schemas.js';

const RANGES = { '24h': { hours: 24, bucket: 'hour' }, '7d': { hours: 24 * 7, bucket: 'day' }, '30d': { hours: 24 * 30, bucket: 'day' } } as const;

const OverviewView = Type.Object({
  range: Type.Union(Object.keys(RANGES).map((r) => Type.Literal(r))),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  series: Type.Array(
    Type.Object({
      at: Type.String({ format: 'date-time' }),
      captures: Type.Integer({ description: 'jobs captured in the bucket' }),
      releases: Type.Integer({ description: 'jobs released in the bucket' }),
      captured: Type.Record(Type.String(), Type.String(), { description: 'money captured (captures and adjustments), per currency, decimal strings' }),
    }),
  ),
  queue_depth: Type.Integer({ description: 'accepted events not yet settled' }),
  dead_letters: Type.Integer(),
  oldest_pending_seconds: Type.Union([Type.Number(), Type.Null()]),
  open_exceptions: Type.Union([Type.Integer(), Type.Null()], { description: 'open reconciliation exceptions (the admin only; null for a tenant)' }),
  alerts_last_24h: Type.Integer(),
  jobs_open: Type.Integer({ description: 'jobs not yet captured or released' }),
});

export function overviewRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/overview',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: 'Settlements over time and what needs attention now (a tenant: its own; the admin: everything). The console\'s overview',
        tags: ['operations'],
        security: bearerAuth,
        querystring: Type.Object({ range: Type.Optional(Type.Union(Object.keys(RANGES).map((r) => Type.Literal(r)), { description: 'default 24h' })) }),
        response: { 200: OverviewView, ...errors(401) },
      },
    },
    async (request) => {
      const range = (request.query.range ?? '24h') as keyof typeof RANGES;
      const tenantId = tenantScope(request);
      const [series, counts] = await Promise.all([settlementSeries(pool, { ...RANGES[range], tenantId }), attentionCounts(pool, tenantId)]);
      return {
        range,
        bucket: RANGES[range].bucket,
        series: series.map((b) => ({ ...b, at: b.at.toISOString() })),
        ...counts,
      };
    },
  );
}
