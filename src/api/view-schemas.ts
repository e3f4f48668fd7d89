import { Type, type TSchema } from '@sinclair/typebox';
import { JOB_STATES } from '../lifecycle/index.js';
import { EVENT_STATES } from '../queue/index.js';
import { AmountString, Metadata, SignedAmountString, Usage } from './schemas.js';

/**
 * What the API answers, as schemas: the OpenAPI document shows them, and in tests the
 * server checks every answer against them (response-check.ts), so a view that grows a
 * field, or sends a null the schema does not allow, fails a test instead of surprising a
 * client. Field names as in CONTRACT.md; the functions that fill them are in views.ts.
 */

const Instant = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const PricingSnapshotView = Type.Object(
  {
    usage: Usage,
    priceBookId: Type.String(),
    model: Type.String(),
    currency: Type.String(),
    priceVersion: Type.Integer(),
    unitPrices: Type.Record(Type.String(), AmountString),
    rounding: Type.String({ examples: ['per_dimension_half_up_micro'] }),
    lines: Type.Array(Type.Object({ dimension: Type.String(), units: Type.Integer(), unitPrice: AmountString, amount: AmountString })),
    price: AmountString,
    billable: AmountString,
    cap: Type.Optional(AmountString),
  },
  { description: 'everything that made the amount: usage, the pinned price version, each line, the cap' },
);

export const SettlementView = Type.Object({
  key: Type.String({ description: 'the settlement key: tenant, job, phase (and version for adjustments)' }),
  charge_type: literals(['capture', 'release', 'adjustment']),
  version: Type.Integer(),
  amount: SignedAmountString,
  status: Type.Literal('posted'),
  created_at: Instant,
  released_remainder: Type.Optional(AmountString),
  reason: Type.Optional(Type.String()),
  pricing: Type.Optional(PricingSnapshotView),
});

export const JobEventView = Type.Object({
  event_key: Type.String(),
  provider: Type.String(),
  type: Type.String({ examples: ['job.completed'] }),
  state: literals(EVENT_STATES),
  reason: Nullable(Type.String()),
  attempts: Type.Integer(),
  error_code: Nullable(literals(['usage_fetch_failed', 'settlement_failed'])),
  last_error: Type.Optional(Nullable(Type.String({ description: 'admin only: the raw error text' }))),
  discarded_by: Type.Optional(Nullable(Type.String())),
  discarded_at: Type.Optional(Nullable(Instant)),
  discard_note: Type.Optional(Nullable(Type.String())),
  received_at: Instant,
  processed_at: Nullable(Instant),
});

const jobSummaryFields = {
  id: Type.String(),
  state: literals(JOB_STATES),
  wallet_id: Type.String(),
  provider: Type.String(),
  provider_job_ref: Nullable(Type.String()),
  model: Type.String(),
  currency: Type.String(),
  limits: Usage,
  metadata: Metadata,
  price_version: Type.Integer(),
  reserved: AmountString,
  captured: AmountString,
  released: AmountString,
  adjusted: SignedAmountString,
  cancel_requested_at: Nullable(Instant),
  hold_expires_at: Instant,
  created_at: Instant,
  auto_extend: Nullable(
    Type.Object(
      { step: Usage, max_limits: Usage },
      { description: 'the rule of automatic extensions: whole steps per dimension, never beyond max_limits' },
    ),
  ),
  usage_so_far: Nullable(Type.Object({}, { additionalProperties: Type.Integer(), description: "each dimension's largest usage in the job's progress reports" })),
  hold_exhausted: Nullable(
    Type.Object(
      {
        reason: Nullable(literals(['max_limits', 'insufficient_funds', 'spend_limit'])),
        reserved: AmountString,
        usage_price: AmountString,
        at: Instant,
      },
      { description: "the latest check found the hold short of the job's usage (null reason: a job without auto_extend)" },
    ),
  ),
};

export const JobSummaryView = Type.Object(jobSummaryFields, {
  description: 'a job as submitted: its reservation at the pinned price version',
});

export const JobView = Type.Object(
  {
    ...jobSummaryFields,
    settlements: Type.Array(SettlementView),
    events: Type.Array(JobEventView),
    alerts: Type.Array(Type.String(), { description: 'the classes of the alerts raised for this job' }),
    alert_details: Type.Array(
      Type.Object({
        class: Type.String(),
        source: Type.String({ description: 'what raised it: a settlement key, or provider/event_key' }),
        detail: Type.Object({}, { additionalProperties: true, description: 'what was seen, per class (as GET /v1/alerts shows it)' }),
        created_at: Instant,
      }),
      { description: 'each alert raised for this job, oldest first, with the amounts it saw' },
    ),
    deliveries: Type.Array(
      Type.Object({
        provider: Type.String(),
        event_key: Type.String(),
        outcome: literals(['accepted', 'already_accepted', 'event_key_conflict', 'event_mismatch']),
        received_at: Instant,
      }),
      { description: 'every webhook delivery that named this job, duplicates included, oldest first' },
    ),
    funding: Type.Array(
      Type.Object({
        grant_id: Type.String(),
        category: literals(['paid', 'promotional']),
        held: AmountString,
        captured: AmountString,
        returned: AmountString,
        refunded: AmountString,
        adjusted: Type.String({
          ...SignedAmountString,
          description:
            "signed: what the job's positive adjustments drew from this grant, less what its refunds gave back (of those draws and of `captured`)",
        }),
      }),
      {
        description:
          "the job's money per grant: the hold's shares in allocation order (the order captures consume them), then the grants only adjustments reached. Per row: once the hold is resolved, held = captured + returned; the job's cost on the grant = captured + adjusted; `refunded` is what refunds gave back of the captured part (already counted in `adjusted`)",
      },
    ),
    extensions: Type.Array(
      Type.Object({
        version: Type.Integer({ minimum: 1 }),
        settlement_key: Type.String({ description: '{tenant}:{job}:extension:{N}' }),
        amount: AmountString,
        limits: Type.Object({}, { additionalProperties: Type.Integer(), description: "the job's limits after this extension" }),
        source: literals(['api', 'auto']),
        created_at: Instant,
      }),
      { description: "the hold's extensions, oldest first: reserved = the first hold + Σ amount" },
    ),
    funding_debt: Type.String({
      ...AmountString,
      description:
        "the part of the job's adjustments no grant covered (the wallet's debt), net of refunds: Σ funding (captured + adjusted) + funding_debt = captured + adjusted",
    }),
  },
  { description: 'a job with its settlements (each with its pricing snapshot), its provider events and its alerts' },
);

export const ReconciliationExceptionView = Type.Object({
  id: Type.String(),
  class: Type.String({ examples: ['terminal_job_without_settlement'] }),
  objects: Type.Object({}, { additionalProperties: true, description: 'the ids the exception is about (job_id, wallet_id, …)' }),
  detail: Type.Object({}, { additionalProperties: true, description: 'what was found, per class' }),
  first_seen_at: Instant,
  last_seen_at: Instant,
  resolved: Type.Boolean(),
  resolution_note: Nullable(Type.String()),
});

export const ReconciliationRunView = Type.Object({
  id: Type.String(),
  clean: Type.Boolean(),
  repair: Type.Boolean(),
  started_at: Instant,
  finished_at: Instant,
  exceptions: Type.Array(ReconciliationExceptionView, { description: 'open exceptions this run found' }),
  resolved_exceptions: Type.Array(ReconciliationExceptionView, { description: 'found again, but already resolved by an operator' }),
  repairs: Type.Array(Type.Object({ class: Type.String(), fingerprint: Type.String(), action: Type.String(), result: Type.String() })),
  classes: Type.Optional(Type.Array(Type.String())),
});
