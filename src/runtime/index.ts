/**
 * The runtime: the only glue between the machine, the store, the planner, the tools and the
 * policy. Invariants: every side effect goes through the ledger inside an invoked actor; a
 * `started` row is durable before the effect; snapshots and events commit together.
 */
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';
export type { RuntimeHooks } from './drive/env.js';
export type { BackgroundErrorContext, RuntimeHealth, RuntimeLimits, RuntimeStats, StalledRun } from './runtime-api.js';
export type { PlannerLimits, PlannerLimitInput } from './drive/limiter.js';
export type { Schedule, ScheduleDefinition, Overlap, CatchUp } from './model/schedules.js';
export type { ScheduleScope } from './registry/schedules.js';
export type { FollowOptions } from './read/follow.js';
export type * from './model/types.js';
export { LOG_EVENT_TYPES, HUMAN_DECISIONS } from './model/types.js';
export type { Trace, Span } from './observe/trace.js';
export type { PruneOptions, PruneReport, RetentionOptions, FinishedStatus } from './retention/prune.js';
export { batonIdGenerator, runTraceIds } from './observe/trace-ids.js';
export type { TracingOptions } from './observe/otel.js';
export { describeTools, type ToolInfo } from './ledger/tool-registry.js';
export { illFormedPath } from './model/well-formed.js';
