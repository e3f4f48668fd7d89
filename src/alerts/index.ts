/**
 * alerts/: the conditions a settlement, a posting or a failing endpoint noticed, kept for an
 * operator and reconciliation (docs/ARCHITECTURE.md, the folders of src/). The door: the rest
 * of src/ imports alerts/ only through this file (.dependency-cruiser.cjs, doors-only-alerts).
 *
 * Each operation with what it can refuse. Neither refuses anything of its own: an alert
 * raised twice is recorded once, and anything thrown is the database's.
 */

/**
 * Raising, in the caller's transaction (an alert commits with the effect that noticed it).
 *
 * - raiseAlerts(tx, alerts, { tenantId, jobId, source }): the alerts of one job. Keyed by
 *   (class, source), the intended constraint alerts_class_source_key: a retried settlement
 *   records each once. Refuses nothing.
 * - raiseEachAlert(tx, alerts): the same for alerts of several jobs (a batch) or of no job
 *   (jobId null: an endpoint disabled), in one statement. Refuses nothing; none is no statement.
 */
export { raiseAlerts, raiseEachAlert, type AlertClass, type RaisedAlert } from './raise.js';

/**
 * Reading (GET /v1/alerts).
 *
 * - listAlerts(db, filter, page): one page, newest first, `limit + 1` rows for pageOf.
 *   Refuses nothing: an unknown tenant, class or job is an empty page.
 * - ALERT_CLASSES: every AlertClass, for filters and schemas.
 */
export { ALERT_CLASSES, listAlerts, type AlertRow } from './list.js';
