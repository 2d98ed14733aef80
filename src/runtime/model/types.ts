/** The public shapes of the runtime API. */
import type { Effect, ListedStatus, Risk, RunStatus, StopReason, Usage, WaitReason } from '../../../machines/types.js';
import type { Decision as PlannerDecision, PlannerMessage } from '../../planner/types.js';
import type { ToolResult } from '../../tools/tool-result.js';
import type { Failure } from '../../failure.js';
import type { MetadataValue } from './labels.js';
import type { RunUserContext, ToolOrigin } from '../../tools/define-tool.js';
import type { ToolCallStatus } from '../../store/index.js';
import type { RunCompensation } from './event-data.js';
export type { RunCompensation, CompensationJson } from './event-data.js';

/** Per-run budget: each one, when used up, ends the run `failed` with `budget_exceeded` (or `timeout`). */
export interface Budget {
  maxLlmCalls?: number;
  maxToolCalls?: number;
  maxTokens?: number;
  /** Spend on model calls, from the planner's prices. */
  maxCostUsd?: number;
  /** Wall clock from creation; the deadline is persisted and survives restarts. */
  timeoutMs?: number;
}

export type { OnExpire, WaitExpiryOptions } from '../../../machines/types.js';
import type { WaitExpiryOptions } from '../../../machines/types.js';

/** Options of one run. */
export interface RunOptions extends WaitExpiryOptions {
  /** The same key returns the same run instead of starting another. */
  idempotencyKey?: string;
  maxSteps?: number;
  budget?: Budget;
  /** `ask`: a budget (or the step limit, or the deadline) that runs out makes the run wait for a person (default `fail`). */
  onBudgetExceeded?: 'fail' | 'ask';
}

/** What `start()` takes. */
/** What `start()` does when the session already has an active run. */
export type OnBusy = 'reject' | 'enqueue' | 'interrupt';

export interface StartRequest {
  input: string;
  sessionId?: string;
  /**
   * When the session has an active run: `reject` (the default) refuses with `session.busy`;
   * `enqueue` keeps the run `queued` and starts it once the runs before it in the session's queue
   * have ended (first in, first out, across restarts and processes); `interrupt` cancels the
   * active run (as `cancel()` does, compensating when `interrupt.compensate`) and starts this
   * one next, before any run enqueued earlier.
   */
  onBusy?: OnBusy;
  /** With `onBusy: 'interrupt'`: how the active run is cancelled. */
  interrupt?: { compensate?: boolean; reason?: string };
  context?: RunUserContext;
  options?: RunOptions;
  /** The caller's W3C `traceparent`: the run's trace links to that span (an invalid one is ignored). */
  traceparent?: string;
  /**
   * What the run is found by (`list({ metadata })`): an object of at most 32 scalars (keys 1-64
   * letters, digits and `_ . : / -`; strings up to 256 characters), 4 KiB as JSON.
   */
  metadata?: Record<string, MetadataValue>;
  /** Tags to find the run by (`list({ tag })`): at most 20, each like a metadata key. */
  tags?: string[];
  /**
   * Starts the run later, at this instant (epoch ms, ISO 8601 or a Date): it is stored now,
   * `queued` until then (listed, cancellable), in a session of its own, and started by a process
   * that claims runs once it is due. An instant already past starts it now.
   */
  startAt?: number | string | Date;
}

/**
 * What `fork()` takes: the step the fork runs from (its steps before it are copied from the
 * source, never run again), and what changes there.
 */
export interface ForkRequest {
  /** The first step the fork plans itself: 0 up to the source's current step. */
  atStep: number;
  /** The decision of step `atStep` instead of asking the planner (tool calls, checked like any, or a final answer). */
  decision?: PlannerDecision;
  /** Another input (only at step 0: later steps were decided on the source's). */
  input?: string;
  /** Another context (only at step 0, and of the same tenant). */
  context?: RunUserContext;
  /** The fork's options (its budget, its waits' expiry, an idempotency key): the source's, with these over them. */
  options?: RunOptions;
  /**
   * A call of the fork that repeats one its source made (the same tool and arguments, not `read`)
   * waits for a person (`ask`, the default), or runs (`allow`, recorded). An `idempotent` one
   * runs either way, with the source's idempotency key.
   */
  repeatEffects?: 'ask' | 'allow';
  /** Who forked it (recorded on its `run.created` event). */
  by?: string;
  /**
   * A run of another agent is forked for this runtime's agent (its planner, instructions and
   * tools) only when the request names that agent; otherwise `run.agent_mismatch`.
   */
  agent?: string;
}

/** A fork's terms as stored with it (`runs.fork`, snake_case JSON). */
export interface ForkTerms {
  step: number;
  repeat_effects: 'ask' | 'allow';
  /** The decision given for step `step`, if one was. */
  decision: PlannerDecision | null;
  by: string | null;
  /** The memory version the source's planner read at step `step` (absent: none recorded; the fork reads the last). */
  memory_version?: number | null;
  /**
   * The session memories the fork sees beneath its own session's, oldest first, each as of the
   * version it was forked at: its source's session (and, for a fork of a fork, its source's).
   */
  memory_bases?: MemoryBase[];
}

/** A session memory a fork reads beneath its own, as of the version it was forked at. */
export interface MemoryBase {
  scope: string;
  version: number;
}

/** Which runs `rerun()` forks: finished runs of a status (default `failed`), narrowed. */
export interface RerunFilter {
  status?: 'failed' | 'succeeded';
  /** Only runs that failed with this failure code (e.g. `planner.failed`). */
  failureCode?: string;
  /** Only runs that ended at or after this instant (epoch ms). */
  since?: number;
  sessionId?: string;
  tenantId?: string;
  /** Report what would be forked; create nothing. */
  dryRun?: boolean;
  /** Forks created together, one batch after another (default 20). */
  batchSize?: number;
  /** At most this many runs (default 1,000). */
  limit?: number;
  repeatEffects?: 'ask' | 'allow';
  by?: string;
}

/** What `rerun()` did, run by run. */
export interface RerunReport {
  dryRun: boolean;
  /** Runs the filter matched. */
  matched: number;
  /** Forks created now. */
  created: number;
  /** Runs rerun before by the same command (their fork is listed, not made again). */
  existing: number;
  reruns: RerunEntry[];
  /** Runs that could not be forked, with why (a tool the agent no longer has, say). */
  failed: { sourceRunId: string; atStep: number; failure: Failure }[];
}

/** One run of a rerun: its source, the step forked at, and the fork (null in a dry run). */
export interface RerunEntry {
  sourceRunId: string;
  atStep: number;
  runId: string | null;
  created: boolean;
}

/**
 * A page of runs (`list`): newest first, every filter at once. `metadata` matches runs with each
 * of these entries (values compared as text), `tag` / `tags` runs with each of these tags (at most
 * 8 entries and tags in all); `failureCode` runs whose failure has that code; `createdAfter` /
 * `createdBefore` (ms) runs created at or after, and before, those instants.
 */
export interface RunListFilter extends Omit<StoreRunFilter, 'labels'> {
  metadata?: Record<string, MetadataValue>;
  tag?: string;
  tags?: string[];
}

/** A run as the API reports it: only what is durable. */
export interface Run {
  id: string;
  sessionId: string;
  /** `queued` while it waits for its session's active run to end (`onBusy`), then the machine's state. */
  status: ListedStatus;
  stopReason: StopReason | null;
  failure: Failure | null;
  waitReason: WaitReason | null;
  pendingApprovalId: string | null;
  /** What the run was started with to be found by (`{}` / `[]` when none). */
  metadata: Record<string, MetadataValue>;
  tags: string[];
  /**
   * A pause an operator asked (`pause`) that the run has not reached yet: it stops before its
   * next step, then waits with reason `paused` (the pending wait's `request` says who and why).
   */
  pauseRequested: PauseRequested | null;
  /** When a run started with `startAt` starts, while it waits `queued` for that instant; else null. */
  startAt: number | null;
  /** The question the run waits to have answered (its pending `input` wait), else null. */
  pendingInput: PendingInput | null;
  input: string;
  answer: string | null;
  context: RunUserContext;
  /** The tenant of the run: its context's `tenant_id`, else (in process, in a server's dev mode) `default`. */
  tenantId: string;
  idempotencyKey: string | null;
  usage: { steps: number; llmCalls: number; toolCalls: number; tokens: number; costUsd: number };
  deadlineAt: number | null;
  /**
   * Set once a cancel or a terminating rejection asked to undo the run's completed calls: under
   * way (`compensating`) or `done`, with the calls compensated, the compensations that failed,
   * and the calls left as they are (no compensator, or an unknown outcome). Null otherwise.
   */
  compensation: RunCompensation | null;
  /** The agent the run belongs to (only its runtimes drive it) and its tools' fingerprint; null for runs from before agents were recorded. */
  agent: { name: string; toolsFingerprint: string | null } | null;
  /** The run this one was forked from, and the step it was forked at (its steps before it are the source's, copied); null otherwise. */
  forkedFrom: ForkedFrom | null;
  /** For a child run (an agent called as a tool): the parent run and its call that started this one; null otherwise. */
  parent: RunParent | null;
  /** The child runs this run's agent tools started, oldest first (at most 100). */
  children: ChildRun[];
  /**
   * While the run waits on a child (`waitReason: 'child'`): that child, and the wait of a person
   * down the tree (the child's, or its own child's…) that it shows, if any; null otherwise.
   */
  childWait: ChildWait | null;
  /**
   * The agents the run's conversation was handed to (`handoff`) and not handed back yet, oldest
   * first: the last one plans the run's next step. Empty while its own agent plans.
   */
  handoffStack: HandoffEntry[];
  createdAt: number;
  updatedAt: number;
}

/** A pause asked of a run and not yet reached: who asked it, and why. */
export interface PauseRequested {
  reason: string | null;
  by: string | null;
}

/** An agent a run's conversation was handed to: who, since which step, by which call, with which tools. */
export interface HandoffEntry {
  agent: string;
  /** The first step it planned. */
  step: number;
  /** The call that handed the conversation to it. */
  toolCallId: string;
  /** The tools it was offered with when it took over, by name. */
  tools: string[];
  /** The first 16 hex digits of the SHA-256 of its instructions, when known. */
  instructionsSha256: string | null;
}

/** Where a child run comes from: the parent run and the call that started it. */
export interface RunParent {
  runId: string;
  toolCallId: string;
}

/** A child run, as its parent lists it. */
export interface ChildRun {
  runId: string;
  toolCallId: string;
  agent: string | null;
  status: RunStatus;
}

/** What a run that waits on its child shows: the child, and a person's wait down the tree. */
export interface ChildWait extends ChildRun {
  /** The run down the tree that waits for a person (decide it on either run's id), or null while none does. */
  asking: {
    runId: string;
    waitReason: WaitReason;
    pendingApprovalId: string;
    pendingInput: PendingInput | null;
    /** The calls the wait is bound to, with the arguments they would run with (none for a question or a budget). */
    toolCalls: { id: string; tool: string; args: unknown }[];
  } | null;
}

/** Whose memory `runtime.memory()` reads, and as of which version (default: the last). */
export interface MemoryRequest {
  /** The session (its tenant's); without it, only the tenant's memory is read. */
  sessionId?: string;
  /** The tenant (default `default`, as for runs started without one). */
  tenantId?: string;
  version?: number;
}

/** The memory as of a version: a session's entries (null when no session was named) and its tenant's. */
export interface MemorySnapshot {
  version: number;
  session: Record<string, unknown> | null;
  tenant: Record<string, unknown>;
}

/** Where a fork comes from: its source run and the first step it ran itself. */
export interface ForkedFrom {
  runId: string;
  step: number;
}

/** Event types of a run's log (docs/architecture.md §6), plus `run.created` (one list, with the store's other vocabularies). */
export { LOG_EVENT_TYPES, type LogEventType } from '../../store/index.js';
import type {
  ApprovalKind,
  ApprovalResolution,
  ApprovalStatus,
  LogEventType,
  RunFilter as StoreRunFilter,
} from '../../store/index.js';

/**
 * One entry of a run's event log; `seq` runs 1..n without gaps. A `draft` (streamed model text)
 * is the exception: delivered live only, never stored, it carries the seq of the last event.
 */
export interface RunEventRecord {
  runId: string;
  seq: number;
  type: LogEventType;
  data: Record<string, unknown>;
  createdAt: number;
}

/** An event of the feed (`readFeed`): a run's `run.created` or `state` event, with its position across runs. */
export type FeedEvent = RunEventRecord & {
  /** Increasing in commit order across every run of the database; never reused. */
  position: number;
};

/** How a human resolves an `uncertain_side_effect`: run it again, or record that it happened. */
export type UncertainResolution = 'retry' | 'done';

/** What `approve` takes: who decides and why; for an uncertain call, whether to run it again or record it done. */
export interface ApproveInput {
  by: string;
  reason?: string;
  resolution?: UncertainResolution;
}

/** What `reject` takes: who decides and why; `terminate` ends the run `rejected` (undoing its calls first, with `compensate`). */
export interface RejectInput {
  by: string;
  reason?: string;
  terminate?: boolean;
  compensate?: boolean;
}

/** A question a run waits to have answered (`Run.pendingInput`). */
export interface PendingInput {
  id: string;
  toolCallId: string;
  question: string;
  choices: string[] | null;
  /** The JSON Schema an answer must satisfy (null: any text). */
  schema: Record<string, unknown> | null;
  role: string;
  expiresAt: number | null;
  /**
   * A tool's question (null for `human.ask`): the tool (and MCP server) that asks, and whether
   * its call waits open for the answer (`inFlight`; the run stays `executing` meanwhile).
   */
  from: QuestionSource | null;
}

/** Who asks a question in the middle of a call. */
export interface QuestionSource {
  tool: string;
  server?: string;
  inFlight: boolean;
}

/** What a wait of each kind asks (`Approval.request`). */
export type WaitRequest =
  | {
      kind: 'input';
      question: string;
      choices: string[] | null;
      schema: Record<string, unknown> | null;
      /** A tool's question: who asks. */
      from?: QuestionSource;
    }
  | {
      kind: 'budget';
      /** The budget that ran out (`timeout`: the deadline; `max_steps`: the step limit). */
      budget: string;
      stepIndex: number;
      /** Each limit, and how much of it the run has used. */
      limits: { budget: string; limit: number | null; used: number }[];
    }
  | { kind: 'policy'; reason: string | null }
  | {
      kind: 'pause';
      /** Why the operator paused the run, and who (as they said). */
      reason: string | null;
      by: string | null;
      /** Where the run goes on once resumed: planning its next step, or running the step it planned. */
      resume: 'planning' | 'executing';
      stepIndex: number;
    }
  | {
      kind: 'repeat';
      /** The source run's call this one would repeat (the same tool, the same arguments), with its outcome. */
      source: RepeatedCall;
    };

/** A call of a fork's source that a call of the fork would repeat (`repeat_effect`). */
export interface RepeatedCall {
  runId: string;
  toolCallId: string;
  tool: string;
  status: ToolCallStatus;
  result: ToolResult | null;
  /** The key the source's call ran with (a repeat a person allows runs with its own). */
  idempotencyKey: string;
}

/** A person's decision on a wait, as `decide()` takes it (`approve()`, `reject()` and `answer()` are shorthands). */
export type HumanDecision =
  | ({ decision: 'approve' } & ApproveInput)
  | ({ decision: 'reject' } & RejectInput)
  /** Approve with other arguments for one call of the step (`toolCallId`, needed when it has more than one). */
  | { decision: 'edit'; by: string; args: unknown; toolCallId?: string; reason?: string }
  /** Do not run the call: the person's output is its result; the step's other calls run. */
  | { decision: 'respond'; by: string; output: unknown; toolCallId?: string; reason?: string }
  /** The answer to a question (an `input` wait), checked against its schema. */
  | { decision: 'answer'; by: string; answer: unknown; reason?: string }
  /** Go on past a budget wait with these limits (absolute; `timeoutMs` is more time from now). */
  | { decision: 'extend'; by: string; limits: Budget & { maxSteps?: number }; reason?: string }
  /** End a run that waits on a budget (it fails with that budget's stop reason). */
  | { decision: 'end'; by: string; reason?: string }
  /** Let a paused run go on where it stopped (`Runtime.resume` takes this decision). */
  | { decision: 'resume'; by: string; reason?: string };

/** The names of the decisions a person can take. */
export const HUMAN_DECISIONS = ['approve', 'reject', 'edit', 'respond', 'answer', 'extend', 'end', 'resume'] as const;
export type HumanDecisionName = (typeof HUMAN_DECISIONS)[number];

/** An approval (any human wait) as the API reports it. */
export interface Approval {
  id: string;
  runId: string;
  stepIndex: number;
  kind: ApprovalKind;
  toolCallIds: string[];
  argsHash: string;
  status: ApprovalStatus;
  resolution: ApprovalResolution | null;
  decidedBy: string | null;
  reason: string | null;
  createdAt: number;
  decidedAt: number | null;
  /**
   * Decisions the run's machine took while it kept waiting on this approval (a variant that
   * asks two approvers records the first here); empty for Baton's own machine.
   */
  votes: ApprovalVote[];
  /** What the wait asks (a question, a budget, a policy's reason); null for a step's or a call's approval. */
  request: WaitRequest | null;
  /** The role that may decide it (`approve`, or the role a policy or an escalation named). */
  role: string;
  /** When it expires (null: never), and what happens then. */
  expiresAt: number | null;
  onExpire: { outcome: 'reject' | 'end' | 'escalate'; role?: string } | null;
  /** What the decider gave: `{ answer }`, `{ edits: [{ tool_call_id, args }] }`, `{ tool_call_id, output }`, `{ limits, deadline_at }`. */
  answer: Record<string, unknown> | null;
}

/** One decision on an approval that did not decide it (see `Approval.votes`). */
export interface ApprovalVote {
  by: string;
  decision: 'approved' | 'rejected';
  reason: string | null;
  at: number;
}

/** One planner step of a run, as the API reports it. */
export interface Step {
  stepIndex: number;
  decision: PlannerDecision;
  usage: Usage;
  /** What the context builder gave the planner (null for steps saved before reports existed). */
  context: ContextReport | null;
  /** The agent that planned it: the top of the run's handoff stack (null for steps saved before it was recorded). */
  agent: string | null;
  /** The memory version its planner read, which its calls read too (null: its agent has no memory tools). */
  memoryVersion: number | null;
  createdAt: number;
}

/** One tool call of the ledger, as the API reports it. */
export interface ToolCall {
  id: string;
  stepIndex: number;
  callIndex: number;
  tool: string;
  toolVersion: string | null;
  effect: Effect | null;
  /** The tool's declared risk in this runtime (null for a tool it does not know). */
  risk: Risk | null;
  /** Where the tool comes from in this runtime (an MCP server, with its annotations and what was overridden), else null. */
  origin: ToolOrigin | null;
  /** For a compensation's row: the call it undoes (its own row has `call_index` -1 − that call's). */
  compensates: string | null;
  /** For a row a fork copied from its source: the source's call (its effect is the source's: it did not run here). */
  copiedFrom: string | null;
  /** For a call of an agent tool: the child run it started (its answer is this call's result). */
  childRunId: string | null;
  /** The handle of work the call started elsewhere (an MCP task: `{ kind: 'mcp_task', server, task_id }`), saved before it waited; null otherwise. */
  handle: unknown;
  /** The key the tool is given as `ctx.idempotencyKey`: the call's id, or the source's key for a copy or a fork's repeat of an idempotent call. */
  idempotencyKey: string;
  args: unknown;
  /** Set when a person edited the arguments before approving: the model's arguments, who, why. */
  edited: { proposedArgs: unknown; by: string; reason: string | null } | null;
  /** Where the call is in the ledger (`TOOL_CALL_STATUSES`). */
  status: ToolCallStatus;
  result: ToolResult | null;
  attempts: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** When the attempt in progress (or the last one) times out; stored, so a restart cannot extend it. */
  deadlineAt: number | null;
}

/** Content a run stored (a tool output too large for the context), as its `artifact` event names it. */
export interface ArtifactRef {
  sha256: string;
  size: number;
  mediaType: string;
}

/** An artifact's bytes. */
export interface Artifact extends ArtifactRef {
  content: Buffer;
  createdAt: number;
}

/** What the context of one step held, stored with the step and shown in traces. */
export interface ContextReport {
  estimatedTokens: number;
  budgetTokens: number;
  /** Messages the planner was given. */
  included: number;
  /** Session history messages left out, oldest first, to fit the budget. */
  dropped: number;
  /** Earlier steps of the run itself left out, oldest first, to fit the budget. */
  droppedSteps: number;
  /** Tool calls whose output was cut to a preview at this step (earlier steps' reports list theirs). */
  truncated: string[];
  /** Tool calls whose output is cut to a preview in this context, in all. */
  truncatedTotal: number;
  /** Messages replaced by a summary (none yet: Baton does not summarize). */
  summarized: number;
  /** Artifacts first referenced at this step, instead of their full content. */
  artifacts: string[];
  /** Artifacts the run's context has referenced, in all. */
  artifactsTotal: number;
  /** What the planner itself did to the context (e.g. compaction after a context-length error). */
  notes: string[];
  /** Requests the planner made for this step (retries included). */
  attempts: number;
  /** The memory the planner read (its agent has memory tools): its version, and the entries shown. */
  memory?: { version: number; entries: number };
}

/** One past tool step of the run: its messages (assistant call, one observation per call) and their tokens. */
export interface Block {
  messages: PlannerMessage[];
  tokens: number;
}

/** What a live run keeps between steps; start one with `createTranscript()`. */
export interface Transcript {
  /** Steps turned into blocks so far (steps below this one). */
  builtThrough: number;
  blocks: Block[];
  /** Blocks before this index are left out of the context. */
  firstKept: number;
  /** Blocks before this index have had their long outputs cut. */
  cutThrough: number;
  /** Tokens of the kept blocks. */
  blockTokens: number;
  /** Session history, as messages with their tokens, and how many of the oldest are left out. */
  history: { message: PlannerMessage; tokens: number }[] | null;
  historyDropped: number;
  historyTokens: number;
  truncatedTotal: number;
  artifacts: Set<string>;
}

/** A run's persisted snapshot, as `checkpoint()` reports it. */
export interface Checkpoint {
  /** How many times the snapshot was written (the compare-and-set version). */
  version: number;
  /** Size of the stored snapshot JSON, in bytes. */
  bytes: number;
  /** The machine and version the snapshot belongs to. */
  machine: { name: string; version: number };
}

/** What a run gets where its request says nothing (`RuntimeOptions.defaults`). */
export interface RunDefaults {
  maxSteps?: number;
  budget?: Budget;
  onBudgetExceeded?: 'fail' | 'ask';
}
