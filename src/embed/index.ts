/**
 * Embedding Baton runs in a service's own XState machines. Invariant: a run started by an actor
 * here is named by an idempotency key in the actor's input, so restoring the parent re-attaches
 * to the same run and never starts a second.
 */
export { fromBatonRun, type BatonRunInput, type BatonRunOutput, type BatonRunEvent } from './from-baton-run.js';
