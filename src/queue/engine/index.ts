/**
 * The one queue engine: claim (SKIP LOCKED, lease, a fresh fencing token from one
 * sequence), fenced writes (LeaseLost), lease extension, retry with backoff and jitter,
 * dead letters, and the read-back after a lost COMMIT — written once, for every queue
 * described by a QueueTable (table.ts has the terms), and the one polling runner of their
 * workers (poller.ts). Used by queue/ (webhook events), outbound/ (deliveries to tenants'
 * endpoints) and funds/payments/ (Stripe's events in, the calls to Stripe out).
 */
export { LeaseLost } from './errors.js';
export { claimDue, claimNamed, deadLetter, extendLeases, lockDue, readBack, retryLater, writeFenced, type ReadBack, type RetryVariant } from './operations.js';
export { commitFenced, recordFailure, type FailedOutcome } from './outcomes.js';
export { Poller, type PollerLog, type PollingLoop } from './poller.js';
export { afterFailure, type AfterFailure, type Failure, type RetryPolicy } from './retry-policy.js';
export { claimSql, engineStatements, lockDueSql, fenceSql, firstValueParam, stateInSql } from './statements.js';
export { FENCING_TOKENS, type FencedClaim, type KeyColumn, type QueueTable } from './table.js';
