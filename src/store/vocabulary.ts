/**
 * The store's vocabulary: every value a text column of a closed set can hold, as one const list
 * each. A list feeds the column's type in `schema.ts`, the sets the runtime reasons with, and the
 * API's types; the run's own vocabulary (statuses, stop and wait reasons, effects, risks) is the
 * machine's (`machines/types.ts`).
 */

/** Every status of a tool call, in the order a call can reach them. */
export const TOOL_CALL_STATUSES = [
  /** Committed before the effect: a row still `started` after a restart was interrupted. */
  'started',
  /** The effect may or may not have happened (interrupted, timed out, aborted, threw): resolved by effect class. */
  'unknown',
  /**
   * The tool stopped to ask a person (`ToolInputRequired`) and did nothing yet: it runs again
   * with the answer, or fails if the question is refused.
   */
  'waiting',
  'succeeded',
  'failed',
  /** Arguments the tool's schema refused. */
  'invalid',
  /** A tool the runtime does not have. */
  'not_found',
  /** Refused by policy. */
  'denied',
  /** Refused by a reviewer. */
  'rejected',
  /** Not run: its step's approval was rejected. */
  'skipped',
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** Settled statuses: the call will not run (again) — all but the three still open. */
export const SETTLED_TOOL_CALL_STATUSES: ReadonlySet<ToolCallStatus> = new Set(
  TOOL_CALL_STATUSES.filter((status) => status !== 'started' && status !== 'unknown' && status !== 'waiting'),
);

/** Settled statuses in which the call did not achieve anything (for loop detection). */
export const FAILED_TOOL_CALL_STATUSES: ReadonlySet<ToolCallStatus> = new Set<ToolCallStatus>([
  'failed',
  'invalid',
  'not_found',
  'denied',
]);

/**
 * What a human wait asks: to run a step's calls (`tool`, or `policy` when a policy escalated one
 * of them to a role), how to resolve an interrupted call (`uncertain`), whether to run a call
 * decided with another version of its tool (`version`), the answer to a question (`input`), or
 * whether a run whose budget ran out goes on (`budget`), or whether a fork repeats an effect its
 * source already had (`repeat`: the same call with the same arguments), or the end of a child run an
 * agent called as a tool started (`child`: decided by the runtime when the child ends, never by a
 * person), or the end of work a call left running elsewhere (`task`, an MCP task: decided by the
 * runtime when a poll finds it ended; its `expires_at` is when it is polled next), or an operator's
 * pause (`pause`: decided by `resume`, never expires). The table is `approvals` for all.
 */
export const APPROVAL_KINDS = [
  'tool',
  'uncertain',
  'version',
  'input',
  'budget',
  'policy',
  'repeat',
  'child',
  'task',
  'pause',
] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** An approval is pending until one decision settles it, or its `expires_at` passes (`expired`). */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** How a decision was applied: an uncertain call run again or recorded done, or a rejection that ended the run. */
// `compensate`: a rejection that ends the run after undoing its completed calls.
// `edit`: approved with a person's arguments; `respond`: a person's output instead of the call;
// `answer`: a question answered; `extend` / `end`: a budget wait; `reject` / `end` of an expiry;
// `resume`: a paused run let go on.
export const APPROVAL_RESOLUTIONS = [
  'retry',
  'done',
  'terminate',
  'compensate',
  'edit',
  'respond',
  'answer',
  'extend',
  'end',
  'reject',
  'resume',
] as const;
export type ApprovalResolution = (typeof APPROVAL_RESOLUTIONS)[number];

/**
 * Entry types of a run's event log (docs/architecture.md §6), plus `run.created`; `draft` is never
 * stored. Not the events the run machine takes (`MACHINE_EVENT_TYPES`).
 */
export const LOG_EVENT_TYPES = [
  'run.created',
  'state',
  'step',
  'action',
  'result',
  'approval_request',
  'approval_result',
  /** The planner asked a person a question (a `human.ask` call, an MCP server's elicitation). */
  'input_request',
  /** The question's answer, and who gave it (or that it expired unanswered). */
  'input_result',
  'artifact',
  'error',
  'draft',
  /** A compensation of a completed call: started, and how it ended (or why none was made). */
  'compensation',
  /** A call of an agent tool started a child run, or its child run ended (with its answer or failure). */
  'child',
  /** A call handed the run's conversation to another agent, or back (`handoff`, `handoff.back`): the stack after it. */
  'handoff',
  /** How far a call in flight has come (`ToolContext.progress`, an MCP task's status). */
  'progress',
  /** A call's work goes on elsewhere (an MCP task) and the run waits for it holding nothing, or that work ended. */
  'task',
  /** An operator's pause was taken by the run (it stops at its next step boundary): who asked, and why. */
  'pause',
  /** A call (or a planner call) waits for a per-key limit before it starts: which limit, which key, how long at least. */
  'throttled',
] as const;
export type LogEventType = (typeof LOG_EVENT_TYPES)[number];

/** Who said a message of a session's committed history. */
export const MESSAGE_ROLES = ['user', 'assistant'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];
