/**
 * The model-based test harness, for Baton's own tests and for services that extend or wrap
 * the run machine (`import { createRunModel, runPath } from 'baton-runtime/testing'`). It reads the
 * transitions from a machine's definition, generates paths that cover every one, and drives
 * each path through the real runtime on a real SQLite file, optionally restoring before every
 * event. Invariant: traversal is pure; only `runPath` starts a runtime.
 */
export { listTransitions, coverTransitions, edgeOf } from './transition-model.js';
export type { TransitionEdge, PathStep, ModelPath, ExploreOptions } from './transition-model.js';
export {
  createRunModel,
  runModelEvents,
  serializeRunState,
  MODEL_LIMITS,
  MODEL_ASK_LIMITS,
  LOOP_SIGNATURE,
  MODEL_APPROVERS,
  type RunPath,
  type RunSnapshot,
} from './run-model.js';
export {
  createPathScenario,
  MODEL_TIMEOUT_MS,
  MODEL_EXPIRES_MS,
  MODEL_EXTENSION_MS,
  type PathScenario,
} from './path-scenario.js';
export { runPath, type PathOutcome } from './path-runner.js';
export { PathMismatchError } from './path-checks.js';
export { createGates, type Gates, type GateHit } from './gates.js';
