import { destinationPolicy, type DestinationPolicy } from '../outbound/destinations.js';
import { DEFAULT_INTAKE_LIMITS, type IntakeLimits } from '../intake/delivery-writer.js';
import { DEFAULT_REPAIR_SETTINGS, type RepairSettings } from '../reconcile/repair.js';

/**
 * The configuration the HTTP layer needs, handed to buildApp by the command that starts it
 * (src/config/ reads the environment; nothing under api/ does). Decorated on the app, so a
 * hook or route reads `request.server.apiSettings` like `serverSecret`.
 */
export interface ApiSettings {
  /** TALLY_ADMIN_TOKEN (or the kept one `serve` made); null: no admin credential, admin calls answer 401 */
  readonly adminToken: string | null;
  /** TALLY_METRICS_TOKEN; null: `/metrics` is open */
  readonly metricsToken: string | null;
  /** TALLY_OUTBOUND_ALLOW / _DENY, parsed once at start */
  readonly destinations: DestinationPolicy;
  /** how intake's writes share commits (TALLY_INTAKE_GROUPS_IN_FLIGHT, TALLY_INTAKE_MAX_GROUP) */
  readonly intake: IntakeLimits;
  /** how a reconciliation run's repairs claim and settle an event (TALLY_LEASE_SECONDS, TALLY_MAX_ATTEMPTS, TALLY_USAGE_FETCH_TIMEOUT_MS) */
  readonly repairs: RepairSettings;
}

declare module 'fastify' {
  interface FastifyInstance {
    apiSettings: ApiSettings;
  }
}

/** What an app built without them gets: no admin, open metrics, the default destination policy, intake limits and repairs. */
export function apiSettingsOf(given: Partial<ApiSettings>): ApiSettings {
  return {
    adminToken: given.adminToken ?? null,
    metricsToken: given.metricsToken ?? null,
    destinations: given.destinations ?? destinationPolicy({}),
    intake: given.intake ?? DEFAULT_INTAKE_LIMITS,
    repairs: given.repairs ?? DEFAULT_REPAIR_SETTINGS,
  };
}
