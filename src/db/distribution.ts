/**
 * How every table would be spread over a Citus cluster (docs/operations/scaling.md): each
 * is either distributed by `tenant_id`, all of them co-located (a tenant's rows of every
 * table on one node, so a settlement — one tenant's job, wallet, grants, entries — is a
 * single-shard transaction where FOR UPDATE and foreign keys work as on one server), or a
 * reference table (small or global, copied to every node, joinable from any shard), or —
 * for a key that must be unique across tenants — distributed by that key, apart.
 *
 * test/integration/citus-schema.test.ts reads the migrated catalog against this file: a
 * table in no list, a unique key or a foreign key of a distributed table without its
 * distribution column, a foreign key between tables that are not co-located, or one from a
 * reference table to a distributed one fails it. The
 * calls scaling.md shows are generated from these lists (citusDistributionSql), so the
 * two cannot drift apart. Nothing here runs on the single-node default.
 */

/** The distribution column of every distributed table. */
export const TENANT_COLUMN = 'tenant_id';

/**
 * The tenant of rows that belong to no tenant but live in a distributed table: an admin's
 * Idempotency-Key answers, a Stripe payment no grant of ours claims. The nil UUID is no
 * tenant's id (ids are UUIDv7), so these rows share one shard and never meet a tenant's.
 */
export const NO_TENANT = '00000000-0000-0000-0000-000000000000';

/**
 * Distributed by tenant_id, in an order where every table comes after the tables its
 * foreign keys name (create_distributed_table needs the referenced table distributed
 * first); the first is the co-location group's anchor.
 */
export const DISTRIBUTED_TABLES = {
  accounts: "wallets and each tenant's system accounts: every money movement locks its tenant's rows",
  jobs: 'a settlement locks its job first; the job names its wallet',
  holds: "a job's reservation, resolved once in its job's settlement",
  settlements: 'one row per financial effect, written under the job lock; its key starts with the tenant',
  grants: "a wallet's sub-accounts, moved under the wallet lock",
  ledger_entries: "immutable transfers between one tenant's accounts",
  hold_shares: "a hold's split across its wallet's grants",
  adjustment_draws: "what a job's adjustments took from its wallet's grants",
  job_extensions: "a job's hold extensions, settled with the job",
  webhook_events: "the outbox of provider events: each is about one tenant's job, settled in that job's transaction",
  delivery_attempts: "a provider event's repeats, conflicts and mismatches, each naming its job, so with the job's tenant",
  alerts: 'raised by a settlement (or an endpoint of the tenant) and shown on the job',
  idempotency_keys: "stored answers, written in the effect's transaction (a tenant's call: the tenant; the admin's: NO_TENANT)",
  webhook_endpoints: "a tenant's webhook destinations",
  outbound_messages: "the outbox of a tenant's webhooks, written in the effect's transaction",
  outbound_deliveries: "one message to one of the tenant's endpoints, a queue of queue/engine/",
  outbound_attempts: 'each try of a delivery, written with its fenced outcome',
  wallet_thresholds: "walked under the wallet's lock",
  spend_limits: "checked by the reservation in the wallet's movement statement",
  spend_periods: "moved in the wallet's movement statement",
  auto_recharge: "a wallet's recharge settings, read under the wallet's lock",
  stripe_customers: "a tenant's Stripe customer",
  stripe_checkouts: "a Checkout top-up of a tenant's wallet, keyed by its grant",
  stripe_payments: 'the payment of a grant (one no grant claims: NO_TENANT), written under the grant lock',
  stripe_refunds: "a refund of a tenant's grant, posted once under its lock",
  stripe_disputes: "a dispute of a tenant's grant, applied once under its lock",
  stripe_calls: 'the outbox of calls to Stripe for a recharge of a wallet, written with the recharge decision',
} as const;

/**
 * Copied to every node (create_reference_table): small, or global by nature, and never
 * the target of a foreign key from it to a distributed table (Citus refuses those).
 */
export const REFERENCE_TABLES = {
  tenants: 'who the tenants are: every distributed row names one (foreign keys to a reference table are allowed)',
  providers: 'the configured providers, read by intake and every settlement',
  price_versions: 'immutable price books, pinned by jobs and read by every settlement',
  api_keys:
    'an API key finds its tenant in one lookup by its hash on any node; few rows, written when a key is made or revoked and at most once a minute per key (last_used_at)',
  console_sessions: "the operator console's sessions (an admin's has no tenant); few rows, one touch per page view",
  duties: 'one row per periodic duty, claimed by one worker of all (cluster-wide by nature)',
  schema_migrations: "the migration runner's bookkeeping",
  payment_settings: "the operator's one Stripe account",
  stripe_events:
    "Stripe's feed for the operator's account: an event names a Stripe object, not a tenant (found when it is settled); few rows next to providers' events",
  provider_usage:
    "a provider's usage statement, imported by the operator and keyed by the provider's job ref, which is not a tenant's key: a record may name no job (reported as a mismatch)",
  reconciliation_runs: 'a run checks every tenant at once',
  reconciliation_exceptions: 'found by cross-tenant checks, some about no one tenant (a currency that does not sum to zero); few rows',
} as const;

/**
 * Distributed by a column of their own, each in a co-location group of its own: a key that
 * must stay unique across tenants, which Citus enforces only inside the shard that holds
 * it — so the shard is chosen by the key. A row is written in the transaction of the
 * tenant's rows it stands for, which then commits on two shards (in two phases when they
 * are on two nodes). No foreign key joins such a table to another distributed table,
 * either way: Citus keeps none between tables that are not co-located.
 *
 * Not a reference table: a claim is written for every accepted event, and a reference
 * table's write goes to every node, so intake's busiest write would stop scaling with the
 * nodes (and every node would store every key). Not co-located by tenant: the key would
 * then be unique within a tenant's shard only, which is what it must not be.
 */
export const KEY_DISTRIBUTED_TABLES = {
  webhook_event_keys: {
    column: 'event_key',
    why: "a provider's event key names one event across tenants (CONTRACT.md, Webhooks): claimed in the statement that writes the event, on the key's shard, so the loser of a race between two tenants' deliveries waits there and is refused",
  },
} as const satisfies Record<string, { column: string; why: string }>;

export type DistributedTable = keyof typeof DISTRIBUTED_TABLES;
export type ReferenceTable = keyof typeof REFERENCE_TABLES;

/** The Citus calls that spread the schema, in an order Citus accepts (docs/operations/scaling.md shows them). */
export function citusDistributionSql(): string {
  const [anchor] = Object.keys(DISTRIBUTED_TABLES);
  return [
    ...Object.keys(REFERENCE_TABLES).map((table) => `select create_reference_table('${table}');`),
    ...Object.keys(DISTRIBUTED_TABLES).map((table) =>
      table === anchor
        ? `select create_distributed_table('${table}', '${TENANT_COLUMN}');`
        : `select create_distributed_table('${table}', '${TENANT_COLUMN}', colocate_with => '${anchor}');`,
    ),
    ...Object.entries(KEY_DISTRIBUTED_TABLES).map(
      ([table, { column }]) => `select create_distributed_table('${table}', '${column}', colocate_with => 'none');`,
    ),
  ].join('\n');
}
