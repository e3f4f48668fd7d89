import { choice, flag, hours, integer, names, text, textWithDefault } from './kinds.js';

/**
 * Every setting Tally reads from its environment, in one place: its name, type, default,
 * one line of documentation, and whether it is a secret. Nothing else in src/ reads
 * `process.env` (test/unit/config.test.ts scans for it); `tally config` prints the
 * effective values, and README's "Configuration" table is generated from this list
 * (`tally config --markdown`) and checked against it by the same test.
 */

/** The crash points of the failure-injection suite (src/failpoints.ts). */
export const FAILPOINT_NAMES = [
  'worker.after_claim',
  'settle.before_commit',
  'settle.after_extension',
  'worker.after_commit',
  'intake.after_commit',
  'payments.before_call',
  'payments.after_call',
] as const;

/** pino's levels. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const HOUR_MS = 3_600_000;

export const SETTINGS = {
  // --- running a server ---
  databaseUrl: text({
    env: 'DATABASE_URL',
    doc: 'your PostgreSQL (15 or later), libpq style, several hosts allowed (`postgres://user:pass@h1,h2/tally?target_session_attrs=read-write`)',
    defaultText: 'unset: the embedded PostgreSQL under `TALLY_DATA_DIR`',
    accepts: 'a PostgreSQL URL (postgres://user:password@host:port/database)',
    pattern: /^postgres(ql)?:\/\/\S+$/,
    secret: 'url-password',
  }),
  port: integer({
    env: 'PORT',
    doc: 'HTTP port of `serve` (and of the server the CLI calls)',
    fallback: 8080,
    min: 1,
    max: 65535,
    accepts: 'a port number (1-65535)',
  }),
  host: textWithDefault({
    env: 'HOST',
    doc: 'address `serve` listens on; set `HOST=0.0.0.0` to reach an embedded setup from elsewhere',
    accepts: 'an address to listen on',
    fallback: (config) => (config.databaseUrl ? '0.0.0.0' : '127.0.0.1'),
    defaultText: '`127.0.0.1` (this machine only) on the embedded database, `0.0.0.0` (every interface) with `DATABASE_URL`',
  }),
  adminToken: text({
    env: 'TALLY_ADMIN_TOKEN',
    doc: "bearer token of admin calls (and of the console's admin sign-in)",
    defaultText:
      'unset: admin calls answer 401, except on the embedded database, where `serve` makes one once, keeps it in `$TALLY_DATA_DIR/admin-token` (mode 0600) and prints it',
    accepts: 'a token',
    secret: 'secret',
  }),
  dataDir: textWithDefault({
    env: 'TALLY_DATA_DIR',
    doc: 'folder of the embedded database, the kept admin token and the kept secret key',
    accepts: 'a folder',
    fallback: './.tally',
  }),
  logLevel: choice({
    env: 'LOG_LEVEL',
    doc: 'pino level of the logs; `debug` also prints the stack of a fatal error',
    words: LOG_LEVELS,
    fallback: 'info',
  }),
  secretKey: text({
    env: 'TALLY_SECRET_KEY',
    doc: 'seals stored idempotent answers, the Stripe API key and the webhook signing secrets (32 bytes, e.g. `openssl rand -hex 32`); every `serve` and `worker` of one database must share it',
    defaultText: 'unset: `$TALLY_DATA_DIR/secret-key`, created once',
    accepts: '32 random bytes as 64 hex characters or base64 (make one with `openssl rand -hex 32`)',
    pattern: /^\s*([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=?)\s*$/,
    secret: 'secret',
  }),
  metricsToken: text({
    env: 'TALLY_METRICS_TOKEN',
    doc: 'when set, `GET /metrics` needs `Authorization: Bearer` with it',
    defaultText: 'unset: `/metrics` is open',
    accepts: 'a token',
    secret: 'secret',
  }),

  // --- the CLI's calls to a running server ---
  url: text({
    env: 'TALLY_URL',
    doc: "the server the CLI's API commands call (`--url` wins)",
    defaultText: '`http://127.0.0.1:$PORT`',
    accepts: 'an http(s) URL',
    pattern: /^https?:\/\/\S+$/,
  }),
  apiKey: text({
    env: 'TALLY_API_KEY',
    doc: "the tenant API key the CLI's tenant commands send (`--token` wins)",
    accepts: 'an API key',
    secret: 'secret',
  }),

  // --- settlement workers and intake ---
  leaseSeconds: integer({
    env: 'TALLY_LEASE_SECONDS',
    doc: "a worker's claim lease: how long a dead worker's claims stay unavailable (live workers extend theirs)",
    fallback: 60,
    min: 1,
  }),
  pollIntervalMs: integer({
    env: 'TALLY_POLL_INTERVAL_MS',
    doc: 'how often idle settlement and delivery loops look for work (NOTIFY wakes settlement sooner)',
    fallback: 1000,
    min: 1,
  }),
  settleBatchSize: integer({
    env: 'TALLY_SETTLE_BATCH_SIZE',
    doc: 'most events a worker loop claims and settles in one transaction (1 = one per transaction)',
    fallback: 32,
    min: 1,
  }),
  settleClaim: choice({
    env: 'TALLY_SETTLE_CLAIM',
    doc: "how a worker takes an event's first attempt: `locked`, in the transaction that settles it (no lease written); `leased`, a claim with a lease first. Retries, lapsed claims and usage fetches are always leased",
    words: ['locked', 'leased'],
    fallback: 'locked',
  }),
  maxAttempts: integer({ env: 'TALLY_MAX_ATTEMPTS', doc: 'settlement attempts before an event is dead-lettered', fallback: 8, min: 1 }),
  usageFetchTimeoutMs: integer({
    env: 'TALLY_USAGE_FETCH_TIMEOUT_MS',
    doc: "timeout of one usage fetch from a provider's API",
    fallback: 10_000,
    min: 1,
    accepts: 'a whole number of milliseconds, 1 or more',
  }),
  reconcileIntervalSeconds: integer({
    env: 'TALLY_RECONCILE_INTERVAL_SECONDS',
    doc: 'scheduled reconciliation in workers; 0 turns it off',
    fallback: 300,
    min: 0,
  }),
  intakeGroupsInFlight: integer({
    env: 'TALLY_INTAKE_GROUPS_IN_FLIGHT',
    doc: 'intake writes in flight per process before deliveries wait to share a commit',
    fallback: 2,
    min: 1,
  }),
  intakeMaxGroup: integer({ env: 'TALLY_INTAKE_MAX_GROUP', doc: 'most deliveries one intake commit writes', fallback: 128, min: 1 }),

  // --- outbound webhooks (docs/outbound-webhooks.md) ---
  outboundAllow: text({
    env: 'TALLY_OUTBOUND_ALLOW',
    doc: 'destinations allowed beyond public addresses: host names, `.domain`, IP addresses or CIDRs, comma-separated',
    defaultText: 'none',
    accepts: 'a comma-separated list of hosts, addresses or CIDRs',
  }),
  outboundDeny: text({
    env: 'TALLY_OUTBOUND_DENY',
    doc: 'destinations always refused (same form; the deny list wins)',
    defaultText: 'none',
    accepts: 'a comma-separated list of hosts, addresses or CIDRs',
  }),
  outboundTimeoutMs: integer({
    env: 'TALLY_OUTBOUND_TIMEOUT_MS',
    doc: "one delivery attempt's whole budget: connect, answer and body",
    fallback: 10_000,
    min: 1,
  }),
  outboundLeaseSeconds: integer({
    env: 'TALLY_OUTBOUND_LEASE_SECONDS',
    doc: "how long a killed worker's delivery waits before another worker sends it; longer than the timeout",
    fallback: (config) => Math.max(60, Math.ceil((2 * (config.outboundTimeoutMs as number)) / 1000)),
    defaultText: 'max(60, 2 × `TALLY_OUTBOUND_TIMEOUT_MS` in seconds)',
    min: 1,
    across: (seconds, config) =>
      seconds * 1000 > (config.outboundTimeoutMs as number)
        ? null
        : `TALLY_OUTBOUND_LEASE_SECONDS (${seconds}) must be longer than TALLY_OUTBOUND_TIMEOUT_MS (${config.outboundTimeoutMs as number} ms): a claim must outlast its delivery`,
  }),
  outboundBackoffMs: integer({
    env: 'TALLY_OUTBOUND_BACKOFF_MS',
    doc: "the first retry's ceiling; it doubles per retry",
    fallback: 5_000,
    min: 1,
  }),
  outboundBackoffCapMs: integer({ env: 'TALLY_OUTBOUND_BACKOFF_CAP_MS', doc: 'no retry waits longer', fallback: 6 * HOUR_MS, min: 1 }),
  outboundRetryHours: hours({ env: 'TALLY_OUTBOUND_RETRY_HOURS', doc: 'a delivery still failing after this long is dead', fallback: 72 }),
  outboundDisableAfterHours: hours({
    env: 'TALLY_OUTBOUND_DISABLE_AFTER_HOURS',
    doc: 'an endpoint failing without a success for this long is disabled',
    fallback: 72,
  }),
  outboundConcurrency: integer({ env: 'TALLY_OUTBOUND_CONCURRENCY', doc: 'deliveries in flight per process', fallback: 8, min: 1 }),

  // --- the test suite's knobs ---
  checkResponses: flag({
    env: 'TALLY_CHECK_RESPONSES',
    doc: 'every JSON answer and outbound message is checked against its schema, objects closed (vitest.config.ts sets it)',
    testOnly: true,
  }),
  failpoints: names({
    env: 'TALLY_FAILPOINTS',
    doc: 'the process SIGKILLs itself at these points (the failure-injection suite)',
    words: FAILPOINT_NAMES,
    testOnly: true,
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;
