/**
 * One owner per table (issue 24.8): the one module of src/ whose SQL may write the table —
 * INSERT, UPDATE, DELETE, MERGE, COPY … FROM or TRUNCATE, CTE forms and ON CONFLICT
 * included. Every other module calls a named function of the owner. Reads are free: a read
 * model may query any table (read models stay apart from write paths), though api/ reads through domain modules too.
 *
 * An owner is a folder (ending in `/`) or a file, relative to the repository root.
 * test/unit/table-owners.test.ts scans src/ and fails on a write outside its owner, on a
 * table created by a migration with no entry here, and on an entry that is no table.
 * A new table: one entry, with the reason this module is the one.
 *
 * `shared` is the narrow exception: another file that writes only the named columns,
 * because the statement that needs them must stay one statement. The test checks that
 * file writes the table with nothing else.
 */
export interface TableOwner {
  owner: string;
  why: string;
  shared?: { file: string; columns: readonly string[]; why: string };
}

export const TABLE_OWNERS = {
  accounts: {
    owner: 'src/funds/',
    why: 'projections and running balances move only with their entries, under the wallet lock (settle, credit, thresholds, rebuild)',
  },
  adjustment_draws: { owner: 'src/funds/', why: "what each positive adjustment took from each grant, written with the grants' new values" },
  alerts: {
    owner: 'src/alerts/raise.ts',
    why: 'raised by the settle transaction; outbound/ raises endpoint_disabled through raiseAlert, handed in by the CLI',
  },
  api_keys: { owner: 'src/catalog/', why: 'tenants and their keys: made, revoked and touched (last_used_at) in one place' },
  console_sessions: {
    owner: 'src/console/session-store.ts',
    why: "sessions are the console's own: made at sign-in, touched, expired, revoked",
  },
  delivery_attempts: {
    owner: 'src/queue/',
    why: "a provider's repeated, conflicting or mismatched delivery, recorded in the outbox statement (an accepted one is its event row)",
  },
  duties: { owner: 'src/duties/', why: 'the conditional upsert that lets one worker of many run a duty per interval' },
  grants: {
    owner: 'src/funds/',
    why: "a wallet's sub-accounts: created, then moved only with the entries that name them, under the wallet lock",
  },
  hold_shares: { owner: 'src/funds/', why: "a hold's split across grants, written with the grants it holds on" },
  job_extensions: { owner: 'src/ledger/', why: "an extension of a job's hold: held under the job's lock with its entries and the hold's new amount" },
  holds: { owner: 'src/ledger/', why: 'a hold is a pending transfer: reserved and resolved with its entries' },
  idempotency_keys: {
    owner: 'src/idempotency/',
    why: 'stored answers of Idempotency-Key requests: api/idempotency.ts writes them, the cleanup duty expires them',
  },
  jobs: {
    owner: 'src/ledger/',
    why: "the job row is every settlement's first lock: its state and totals change only in ledger transactions (submission inserts through ledger/job-writes.ts)",
    shared: {
      file: 'src/queue/enqueue.ts',
      columns: ['event_seq'],
      why: "intake numbers a group of events under their jobs' row locks in the one statement that inserts them (one round trip per group)",
    },
  },
  ledger_entries: { owner: 'src/funds/', why: 'immutable transfers, appended with the projection they move' },
  outbound_attempts: { owner: 'src/outbound/', why: "one row per attempt to send a tenant's webhook, written with its fenced outcome" },
  outbound_deliveries: {
    owner: 'src/outbound/',
    why: 'the second queue of queue/engine/ (deliveries-table.ts); enqueued with the effect, replayed, held',
  },
  outbound_messages: { owner: 'src/outbound/', why: "the outbox of tenants' webhooks, written in the effect's transaction" },
  price_versions: { owner: 'src/catalog/', why: 'immutable versions, published under a per-model advisory lock' },
  provider_usage: { owner: 'src/reconcile/', why: "providers' usage records, imported to compare with accepted usage" },
  providers: { owner: 'src/catalog/', why: 'configured providers, their secrets and policies' },
  reconciliation_exceptions: { owner: 'src/reconcile/', why: 'what a run finds, stored with it and cleared by a later run' },
  reconciliation_runs: { owner: 'src/reconcile/', why: 'a stored reconciliation run' },
  schema_migrations: { owner: 'src/db/migrate.ts', why: "the migration runner's bookkeeping (it creates the table itself)" },
  settlements: { owner: 'src/ledger/', why: 'one row per financial effect, inserted by settle() under its unique key' },
  spend_limits: { owner: 'src/funds/', why: "checked by the reservation in the wallet's movement statement" },
  spend_periods: { owner: 'src/funds/', why: "spend counters, moved in the wallet's movement statement" },
  tenants: { owner: 'src/catalog/', why: 'tenants are created with their first API key' },
  wallet_thresholds: { owner: 'src/funds/', why: 'walked entry by entry under the wallet lock' },
  auto_recharge: {
    owner: 'src/funds/payments/',
    why: "a wallet's auto-recharge settings and failure count, moved by its recharges' outcomes",
  },
  payment_settings: { owner: 'src/funds/payments/', why: "the operator's Stripe account: a sealed API key and the webhook secrets" },
  stripe_calls: {
    owner: 'src/funds/payments/',
    why: 'the outbox of calls to Stripe, a queue of queue/engine/ (calls-table.ts): written with the recharge decision, called after commit',
  },
  stripe_checkouts: { owner: 'src/funds/payments/', why: 'a Checkout top-up: its request, grant and session' },
  stripe_customers: {
    owner: 'src/funds/payments/',
    why: "each tenant's Stripe customer, created once, and its latest checkout's payment method",
  },
  stripe_disputes: { owner: 'src/funds/payments/', why: 'disputes by id: their grant, status and close, each applied once' },
  stripe_events: {
    owner: 'src/funds/payments/',
    why: "Stripe's events as received, a queue of queue/engine/ (events-table.ts): stored before the 2xx, settled under fencing tokens",
  },
  stripe_payments: { owner: 'src/funds/payments/', why: 'one row per payment intent that succeeded: the key of one payment, one grant' },
  stripe_refunds: { owner: 'src/funds/payments/', why: 'refunds by id: posted once, credited back once' },
  webhook_endpoints: { owner: 'src/outbound/', why: "tenants' endpoints: registered, rotated, disabled after failures, enabled" },
  webhook_event_keys: {
    owner: 'src/queue/enqueue.ts',
    why: "a provider's event key claimed across tenants, in the statement that enqueues its event and never after",
  },
  webhook_events: { owner: 'src/queue/', why: 'the event outbox: enqueued, claimed and marked under fencing tokens' },
} as const satisfies Record<string, TableOwner>;

export type OwnedTable = keyof typeof TABLE_OWNERS;

/**
 * Modules that write a table named at run time, and why that is still one owner per table:
 * the test checks each description they are handed lives in its table's owner.
 */
export const GENERIC_WRITERS = {
  'src/queue/engine/':
    'the queue engine writes the table of the QueueTable description it is given (queue/events-table.ts, outbound/deliveries-table.ts)',
} as const satisfies Record<string, string>;
