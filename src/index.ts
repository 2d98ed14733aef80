/**
 * Baton: a durable runtime for LLM agents. Every task is a run, an XState machine persisted
 * to SQLite (or PostgreSQL) after every transition, resumable after a crash or a long approval wait, and never
 * running a side effect twice without a human knowing.
 */
export {
  createRuntime,
  LOG_EVENT_TYPES,
  batonIdGenerator,
  runTraceIds,
  parseTraceparent,
  describeTools,
  illFormedPath,
} from './runtime/index.js';
export type * from './runtime/index.js';
export {
  defineTool,
  ToolFailedError,
  ToolOutcomeUnknownError,
  ToolUnavailableError,
  EFFECTS,
  RISKS,
} from './tools/index.js';
export type {
  AnyTool,
  Tool,
  ToolSpec,
  ToolContext,
  ToolResult,
  Effect,
  Risk,
  Reconciliation,
  RunUserContext,
  ToolOrigin,
} from './tools/index.js';
export { createScriptedPlanner, createOpenAIPlanner, decisionSchema } from './planner/index.js';
export type {
  Planner,
  PlannerRequest,
  PlannerResponse,
  PlannerMessage,
  PlannerTool,
  Decision,
  Script,
  OpenAIPlannerOptions,
  ModelPrices,
} from './planner/index.js';
export { defaultDecision, POLICY_DECISIONS } from './policy/index.js';
export type { Policy, PolicyDecision, PolicyRequest, PolicyVerdict } from './policy/index.js';
export { BatonError, createFailure, toFailure, isFailure, quoteId, FAILURE_CODES, FAILURE_KINDS } from './failure.js';
export type { Failure, FailureCode, FailureKind, Result } from './failure.js';
export { runMachine, MACHINE_VERSION } from '../machines/run-machine.js';
export { describeMachine } from '../machines/describe-machine.js';
export {
  batonRunMachine,
  BATON_MACHINE_NAME,
  checkRunMachine,
  defineRunMachine,
  durableDelay,
  extendRunMachine,
  REQUIRED_EVENTS,
} from '../machines/variants.js';
export type { RunMachineDefinition, VariantSpec, VariantGuard, StateConfigs } from '../machines/variants.js';
export { statusOf, stateName } from '../machines/run-status.js';
export type { MachineDescription, MachineState, MachineTransition } from '../machines/describe-machine.js';
export { defineAgent, resolveAgentPlanner } from './agent/index.js';
export { fromBatonRun } from './embed/index.js';
export type { BatonRunInput, BatonRunOutput, BatonRunEvent } from './embed/index.js';
export type { Agent, AgentSpec, ModelSettings } from './agent/index.js';
export { RUN_STATUSES, STOP_REASONS, MACHINE_EVENT_TYPES } from '../machines/types.js';
export type { RunStatus, StopReason, RunEvent, RunContext } from '../machines/types.js';
export { openDatabase, TOOL_CALL_STATUSES } from './store/index.js';
export type { ToolCallStatus } from './store/index.js';
export { DEFAULTS, OPENAI_PLANNER_DEFAULTS } from './defaults.js';
