/**
 * The runtime: the only glue between the machine, the store, the planner, the tools and the
 * policy. Invariants: every side effect goes through the ledger inside an invoked actor; a
 * `started` row is durable before the effect; snapshots and events commit together.
 */
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';
export type { RuntimeHooks } from './env.js';
export type { Checkpoint } from './types.js';
export type { BackgroundErrorContext, RuntimeHealth, RuntimeStats, StalledRun } from './runtime-api.js';
export type { FollowOptions } from './follow.js';
export type * from './types.js';
export { EVENT_TYPES } from './types.js';
export type { Trace, Span } from './trace.js';
export type { PruneOptions, PruneReport, RetentionOptions, FinishedStatus } from './prune.js';
export { batonIdGenerator, runTraceIds, type TracingOptions } from './otel.js';
export { parseTraceparent } from './traceparent.js';
export type { ContextReport } from './types.js';
export { describeTools, type ToolInfo } from './tool-registry.js';
export { illFormedPath } from './well-formed.js';
