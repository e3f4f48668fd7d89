/**
 * The one queue engine (src/queue/engine/): every kind of work Tally does in the
 * background — webhook events to settle (webhook_events), deliveries to tenants'
 * endpoints (outbound_deliveries), and whatever comes next — is a row in a table that
 * workers claim, work on outside any lock, and finish under the claim's token. The
 * generic parts are written once here; a queue is a small description of its table.
 *
 * Terms:
 * - **claim** — a worker taking due rows: the claimed state, a lease and a fresh fencing
 *   token, under FOR UPDATE SKIP LOCKED (workers never wait on each other).
 * - **lease** — how long a claim is its worker's. A live worker may extend it; a dead
 *   worker's claims become claimable again when it runs out.
 * - **fencing token** — a number from one sequence (`fencing_tokens`, shared by every
 *   queue), new at every claim. Every later write names it and changes the row only
 *   while that claim is current, so a worker whose lease ran out writes nothing
 *   (LeaseLost).
 * - **attempt** — one try at the work; a failed one is retried with backoff and jitter,
 *   capped, until the queue's policy says dead (dead letter).
 */

/** One column of the primary key, with the SQL type its array parameters are cast to. */
export interface KeyColumn {
  readonly column: string;
  readonly type: 'text' | 'bigint' | 'uuid';
}

/**
 * What the engine needs to know of a queue's table. Everything here is SQL written by the
 * queue's owner (constants, never input): the engine splices it into its statements.
 * Aliases: `c` is a candidate row in the claim's walk, `w` the row being written.
 */
export interface QueueTable {
  /** prefixes the names of the prepared statements (`<name>_retry`, …) */
  readonly name: string;
  readonly table: string;
  /** the primary key: claims, fenced writes and read-backs find rows by it */
  readonly key: readonly KeyColumn[];
  readonly states: {
    readonly column: string;
    /** states a claim may take (the claimed one too: a claim whose lease ran out) */
    readonly claimable: readonly string[];
    /** held by a worker: the only state a fenced write changes */
    readonly claimed: string;
    /** where a failed attempt waits for its retry */
    readonly retry: string;
    /** the dead letter */
    readonly dead: string;
  };
  /** when the claim's lease ends (null when unclaimed) */
  readonly lease: string;
  /** another column that holds the lease's end while claimed (outbound: next_attempt_at), or null */
  readonly leaseMirror: string | null;
  /** the fencing token of the current claim */
  readonly token: string;
  /** when the row is due: claims take rows whose time has come; a retry moves it */
  readonly due: string;
  readonly attempts: {
    readonly column: string;
    /**
     * 'at_claim': a claim that takes an unclaimed row starts an attempt (taking over a
     * lapsed claim continues it); 'at_failure': a failed attempt is counted when recorded.
     * Either way a claim lost to a dead worker is never an attempt.
     */
    readonly counted: 'at_claim' | 'at_failure';
  };
  /** where a failure's text is kept, or null when the queue keeps it elsewhere */
  readonly error: string | null;
  /** more columns set by a dead letter (inbound: its reason) */
  readonly deadAlso: string | null;
  readonly claim: {
    /** extra conditions on a candidate `c` (per-job order, an enabled endpoint), or null */
    readonly eligible: string | null;
    /** the walk's order over `c`, matching an index so the walk stops at its limit */
    readonly order: string;
    /**
     * A column that one claim never crosses (webhook_events: tenant_id), or null. A claim
     * then takes the first claimable row in the order, and more rows only of its value:
     * each batch is one tenant's, so concurrent batches lock different wallets instead of
     * queueing on each other's, and every statement of a batch names one tenant (one
     * shard when distributed by tenant). An index on (group, order…) serves the walk.
     */
    readonly group: string | null;
    /** tables joined to `w` for what a claim returns, with their join condition */
    readonly join: { readonly from: string; readonly on: string } | null;
    /** what a claim returns, over `w` and the join */
    readonly returning: string;
    /**
     * 'per_call': an unnamed statement, planned for the table as it is at every call (a
     * kept plan of a growing table went slow); 'prepared': named, planned once per
     * connection — the limit is written into the text either way.
     */
    readonly plan: 'per_call' | 'prepared';
  };
}

/** A claim as a fenced write names it: the row's key values, in key order, and the claim's token. */
export interface FencedClaim {
  readonly key: readonly (string | bigint)[];
  readonly token: bigint;
}

/** The one sequence every queue's fencing tokens come from. */
export const FENCING_TOKENS = 'fencing_tokens';
