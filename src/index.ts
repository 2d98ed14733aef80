/**
 * Baton: a durable runtime for LLM agents. Every task is a run, an XState machine persisted
 * to SQLite (or PostgreSQL) after every transition, resumable after a crash or a long approval wait, and never
 * running a side effect twice without a human knowing.
 *
 * The package's root is what an application embedding Baton uses: the runtime, tools, planners,
 * policies, agents, failures and the vocabularies of what the API reports. Variants of the run
 * machine are made with `baton-runtime/machines`; the HTTP service is `baton-runtime/server`,
 * MCP tools `baton-runtime/mcp`, the model-based harness `baton-runtime/testing`.
 */
export { createRuntime, LOG_EVENT_TYPES, HUMAN_DECISIONS, batonIdGenerator, runTraceIds } from './runtime/index.js';
export type * from './runtime/index.js';
export {
  defineTool,
  askHuman,
  HUMAN_ASK,
  HANDOFF_BACK,
  memoryTools,
  MEMORY_READ,
  MEMORY_WRITE,
  MEMORY_SCOPES,
  ToolFailedError,
  ToolInputRequired,
  ToolDetached,
  ToolOutcomeUnknownError,
  ToolUnavailableError,
  ToolRateLimitedError,
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
  ChildBudget,
  ToolQuestion,
  ToolAnswer,
  ToolInput,
  ToolProgress,
  HandlePoll,
  PollContext,
  AskHumanOptions,
  MemoryScope,
  MemoryToolsOptions,
  ConcurrencyLimit,
  RateLimit,
  LimitKey,
} from './tools/index.js';
export {
  createScriptedPlanner,
  createOpenAIPlanner,
  decisionSchema,
  plannerDecisionSchema,
  memoryPrompt,
} from './planner/index.js';
export type {
  Planner,
  PlannerRequest,
  PlannerResponse,
  PlannerMessage,
  PlannerTool,
  PlannerMemory,
  Decision,
  PlannerDecision,
  Script,
  OpenAIPlannerOptions,
  ModelPrices,
} from './planner/index.js';
export { POLICY_DECISIONS } from './policy/index.js';
export type { Policy, PolicyDecision, PolicyOutcome, PolicyRequest, PolicyVerdict } from './policy/index.js';
export { BatonError, isFailure, FAILURE_CODES, FAILURE_KINDS } from './failure.js';
export type { Failure, FailureCode, FailureKind, Result } from './failure.js';
export { defineAgent, resolveAgentPlanner, agentTool, subAgentsOf, handoff } from './agent/index.js';
export type { Agent, AgentSpec, ModelSettings, AgentToolOptions, HandoffOptions } from './agent/index.js';
export { fromBatonRun } from './embed/index.js';
export type { BatonRunInput, BatonRunOutput, BatonRunEvent } from './embed/index.js';
export { LISTED_STATUSES, QUEUED_STATUS, RUN_STATUSES, STOP_REASONS, WAIT_REASONS } from '../machines/types.js';
export type {
  ListedStatus,
  RunStatus,
  StopReason,
  WaitReason,
  HandoverBudget,
  HandoffFrame,
} from '../machines/types.js';
export { TOOL_CALL_STATUSES } from './store/index.js';
export type { ToolCallStatus } from './store/index.js';
export { DEFAULTS, OPENAI_PLANNER_DEFAULTS } from './defaults.js';
