export { Random } from './random.js';
export { SCENARIO_KINDS, buildScenario, type Scenario, type ScenarioKind, type ProviderEvent } from './scenarios.js';
export { DEFAULT_CHAOS, deliveriesOf, expectedRefusalOf, type ChaosOptions, type Delivery, type SimulatedJob } from './deliveries.js';
export { Limiter, send, type DeliveryResult } from './sender.js';
export { planJobs, simulate, type PlannedJob, type SimulationOptions, type SimulationReport } from './simulator.js';
