/**
 * The job state machine: decide(job, event, policy) → next state, financial
 * intents and a recorded outcome. Pure: the shell loads the locked job, calls
 * decide, and writes what it returns.
 */
export { JOB_STATES, NON_TERMINAL_STATES, TERMINAL_STATES, isTerminal, type JobState, type TerminalState } from './states.js';
export {
  InvalidEventError,
  LIFECYCLE_EVENT_TYPES,
  yieldsToAwaitingEvents,
  type LifecycleEvent,
  type LifecycleEventType,
} from './events.js';
export {
  CHARGE_TYPES,
  InvalidSettlementKeyError,
  creditKey,
  extensionKey,
  formatLedgerKey,
  holdKey,
  parseLedgerKey,
  parseSettlementKey,
  settlementKey,
  type ChargeType,
  type LedgerKey,
  type SettlementKeyParts,
} from './keys.js';
export {
  DEFAULT_POLICY,
  InvalidPolicyError,
  parsePolicy,
  policyToJson,
  type ProviderPolicy,
  type ProviderPolicyJson,
} from './policy.js';
export { InvalidJobViewError, type JobView } from './job-view.js';
export type { Alert, Decision, Intent, JobIntent, JobTotals, Outcome } from './decision.js';
export { decide } from './decide.js';
export { checkExtension, usageSoFar, type AutoExtend, type ExtensionCheck } from './extension.js';
export {
  exhaustion,
  growByRequest,
  growthOf,
  refused,
  type Extension,
  type ExhaustedReason,
  type Growth,
  type HoldExhausted,
} from './growth.js';
export { extensionIntent } from './intents.js';
