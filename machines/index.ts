/**
 * The run machine and what a variant of it is made with: the package's `baton-runtime/machines`
 * (`createRuntime({ machine })` takes what `extendRunMachine` or `defineRunMachine` returns).
 * Invariants: everything here is pure, importing only xstate, zod and Baton's failure shape (real actors are
 * injected with `.provide()`); a variant keeps the six public states, the actors where Baton's
 * machine invokes them and the events the runtime sends in each state (`REQUIRED_EVENTS`), which
 * `checkRunMachine` checks before a runtime opens its file.
 */
export { runMachine, MACHINE_VERSION } from './run-machine.js';
export {
  batonRunMachine,
  BATON_MACHINE_NAME,
  checkRunMachine,
  defineRunMachine,
  durableDelay,
  extendRunMachine,
  REQUIRED_ACTORS,
  REQUIRED_EVENTS,
  RUN_CONTEXT_KEYS,
  type RunMachineDefinition,
  type VariantSpec,
  type VariantGuard,
  type StateConfigs,
} from './variants.js';
export {
  describeMachine,
  type MachineDescription,
  type MachineState,
  type MachineTransition,
} from './describe-machine.js';
export { statusOf, stateName } from './run-status.js';
export { MACHINE_EVENT_TYPES, type MachineEventType, type RunEvent, type RunContext } from './types.js';
