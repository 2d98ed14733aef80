/**
 * The run machine's vocabulary: public states, events, context and the inputs of its actors.
 * Everything here is JSON so a snapshot can be persisted and restored verbatim.
 */
import type { Failure } from '../src/failure.js';

// The statuses are written once, as the parts of the lifecycle; every other list or set of them
// (the store's queries, the API's filters, the waits) is made from these.

/** States in which a run is being driven: a process holds it (a run waiting for a human is held by none). */
export const IN_FLIGHT_STATUSES = ['pending', 'planning', 'executing'] as const;
/** States a run can leave; at most one of these per session. */
export const ACTIVE_STATUSES = [...IN_FLIGHT_STATUSES, 'waiting_human'] as const;
/** States a run has ended in, and never leaves. */
export const TERMINAL_STATUSES = ['succeeded', 'failed'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
/** States a run stays in until someone acts on it: waiting for a human, or ended. */
export const SETTLED_STATUSES = ['waiting_human', ...TERMINAL_STATUSES] as const;

/** The six public states of a run, in lifecycle order. */
export const RUN_STATUSES = [...ACTIVE_STATUSES, ...TERMINAL_STATUSES] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * A run accepted while its session had an active run (`onBusy: 'enqueue' | 'interrupt'`): it
 * waits, outside any machine, for that run to end, and is `pending` (its machine not yet started)
 * once it may go. Not a state of the machine: a row's status only.
 */
export const QUEUED_STATUS = 'queued';
/** Every status a run's row (and the API's `Run`) can have: `queued`, then the machine's six. */
export const LISTED_STATUSES = [QUEUED_STATUS, ...RUN_STATUSES] as const;
export type ListedStatus = (typeof LISTED_STATUSES)[number];

/** Why a run ended `failed`. */
export const STOP_REASONS = [
  'error',
  'cancelled',
  'timeout',
  'budget_exceeded',
  'rejected',
  'max_steps',
  'loop_detected',
  /** A human wait passed its `expiresIn` with `end` as the outcome. */
  'expired',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** What happens if a call is interrupted mid-way (docs/architecture.md §4): what the ledger does on resume. */
export const EFFECTS = ['read', 'idempotent', 'reconcilable', 'unsafe'] as const;
export type Effect = (typeof EFFECTS)[number];

/** How much a call needs a human: `low` runs, `high` needs approval, `destructive` is denied by default. */
export const RISKS = ['low', 'high', 'destructive'] as const;
export type Risk = (typeof RISKS)[number];

/** Which budget ran out. */
export const BUDGETS = ['max_llm_calls', 'max_tool_calls', 'max_tokens', 'max_cost_usd'] as const;
export type BudgetName = (typeof BUDGETS)[number];

/**
 * What a run that asks a human when a budget runs out (`onBudgetExceeded: 'ask'`) can wait on:
 * a budget its actors spend, the step limit, or the wall-clock deadline.
 */
export const HANDOVER_BUDGETS = [...BUDGETS, 'max_steps', 'timeout'] as const;
export type HandoverBudget = (typeof HANDOVER_BUDGETS)[number];

/**
 * Why a run waits for a human: a step's calls need approval; a call's outcome is unknown; a call
 * decided with one version of its tool would run another (deployed since); the planner asked a
 * question (`input`); a budget ran out and the run asks whether to go on (`budget`); a policy
 * escalated a call to a role that must allow it (`policy`); a fork's call would repeat an effect
 * its source run already had, the same call with the same arguments (`repeat_effect`); a call of
 * an agent as a tool waits for the child run it started to end (`child`: the child may itself wait
 * for a person, whose wait the parent then shows); a call whose work goes on elsewhere (an MCP task)
 * waits for it to end, polled now and then by whichever runtime loads the run (`task`); an operator
 * paused the run before its next step (`paused`: it goes on where it stopped once resumed).
 */
export const WAIT_REASONS = [
  'approval',
  'uncertain_side_effect',
  'tool_version_mismatch',
  'input',
  'budget',
  'policy',
  'repeat_effect',
  'child',
  'task',
  'paused',
] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/** Waits on one call of a step (the step's other calls go on after it), not on a whole step. */
export const CALL_WAIT_REASONS = [
  'uncertain_side_effect',
  'tool_version_mismatch',
  'input',
  'repeat_effect',
  'child',
  'task',
] as const;

/**
 * What happens to a human wait no one decided before it expired: `reject` (the model is told; a
 * budget wait ends), `end` (the run fails, `approval.expired`), or `{ escalate: role }` (the wait
 * goes on, once, for that role, with no further expiry).
 */
export type OnExpire = 'reject' | 'end' | { escalate: string };

/** How long a human wait lasts (ms) and what happens then (default `reject`). */
export interface WaitExpiryOptions {
  expiresIn?: number;
  onExpire?: OnExpire;
}

/** What happens when no one decides a human wait before it expires. */
export const EXPIRY_OUTCOMES = ['reject', 'end', 'escalate'] as const;
export type ExpiryOutcome = (typeof EXPIRY_OUTCOMES)[number];

/** Limits the machine enforces itself (the rest are enforced by its actors). */
export interface MachineLimits {
  maxSteps: number;
  maxLlmCalls: number | null;
  maxToolCalls: number | null;
  maxTokens: number | null;
  maxCostUsd: number | null;
  loopThreshold: number;
  /** `ask`: a budget that runs out makes the run wait for a human (reason `budget`) instead of ending it. */
  onBudgetExceeded?: 'fail' | 'ask';
}

/** The limits a person may raise on a budget wait (`extended`). */
export type ExtendedLimits = Partial<
  Pick<MachineLimits, 'maxSteps' | 'maxLlmCalls' | 'maxToolCalls' | 'maxTokens' | 'maxCostUsd'>
>;

/** A budget wait: which budget ran out, and where the run goes on if a person extends it. */
export interface BudgetWait {
  budget: HandoverBudget;
  resume: 'planning' | 'executing';
}

/** A pause an operator asked for (`pause`): who, and why; the run stops at its next step boundary. */
export interface PauseAsk {
  reason: string | null;
  by: string | null;
}

/** A pause the run is in: where it goes on once resumed, and the ask it honours. */
export interface PauseWait extends PauseAsk {
  resume: 'planning' | 'executing';
}

/** Small, JSON-only context: ids, counters, deadlines, the open approval, the stop reason. */
export interface RunContext {
  runId: string;
  stepIndex: number;
  llmCalls: number;
  toolCalls: number;
  tokens: number;
  costUsd: number;
  limits: MachineLimits;
  deadlineAt: number | null;
  pendingApprovalId: string | null;
  waitReason: WaitReason | null;
  loopSignature: string | null;
  loopCount: number;
  stopReason: StopReason | null;
  failure: Failure | null;
  /**
   * Set when the run is undoing what it did before it ends `failed` (a cancel or a terminating
   * rejection that asked for compensation): how it will end, and, once done, the report.
   * Absent in snapshots from before compensation existed (read as null).
   */
  compensation?: Compensation | null;
  /** Set while the run waits on a budget (absent in snapshots from before budget hand-over). */
  budgetWait?: BudgetWait | null;
  /** Budget waits so far: the next one's id is made from it (absent before budget hand-over). */
  budgetAsks?: number;
  /**
   * The agents the conversation was handed to within this run, oldest first: the last one plans
   * the next step (the run's own agent when empty). A handoff pushes, a handoff back pops.
   * Absent in snapshots from before handoffs (read as empty).
   */
  handoffStack?: HandoffFrame[];
  /** A pause asked and not yet reached (absent in snapshots from before operator pause: none). */
  pauseAsk?: PauseAsk | null;
  /** Set while the run is paused (`waitReason: 'paused'`). */
  pauseWait?: PauseWait | null;
  /** Pauses so far: the next one's id is made from it. */
  pauses?: number;
}

/** An agent the conversation was handed to (`handoff(agent)`): who, since which step, by which call. */
export interface HandoffFrame {
  agent: string;
  /** The first step it planned. */
  step: number;
  /** The call that handed the conversation to it. */
  callId: string;
  /** The tools it was offered with, by name, when it took over. */
  tools: string[];
  /** The first 16 hex digits of the SHA-256 of its instructions, when it has them. */
  instructions: string | null;
}

/** A compensation in progress or done: how the run ends after it, and what was undone. */
export interface Compensation {
  reason: 'cancelled' | 'rejected';
  failure: Failure | null;
  report: CompensationReport | null;
}

/** What a compensation did, call by call (the ledger has each compensation's row). */
export interface CompensationReport {
  /** Calls undone by their compensator, newest first. */
  compensated: { toolCallId: string; tool: string }[];
  /** Calls whose compensator failed (or whose compensation's outcome stayed unknown). */
  failed: { toolCallId: string; tool: string; failure: Failure }[];
  /** Completed (or possibly completed) calls left as they are, with why. */
  notCompensated: { toolCallId: string; tool: string; reason: 'no_compensator' | 'outcome_unknown' }[];
}

/** What a run machine is created with. */
export interface RunInput {
  runId: string;
  limits: MachineLimits;
  deadlineAt: number | null;
  /** A fork begins at the step it was forked at (its earlier steps are copies): 0 when absent. */
  stepIndex?: number;
  /** Budget waits among a fork's copied steps, so its own are numbered after them: 0 when absent. */
  budgetAsks?: number;
  /** Pauses among a fork's copied steps, so its own are numbered after them: 0 when absent. */
  pauses?: number;
  /** A fork's handoff stack at the step it was forked at: empty when absent. */
  handoffStack?: HandoffFrame[];
}

/** Token usage (and cost, when known) of one planner step. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
}

/** What a child run used, added to its parent's counters when it ends (its budget is a slice of the parent's). */
export interface ChildUsage {
  llmCalls: number;
  toolCalls: number;
  tokens: number;
  costUsd: number;
}

/** Events the run machine accepts (docs/architecture.md §3). */
export type RunEvent =
  | { type: 'start' }
  /** `given`: the decision was given by a person (a fork's), not asked of a model: no planner call is counted. */
  | { type: 'plan_ready'; stepIndex: number; usage: Usage; final: boolean; given?: boolean }
  | { type: 'plan_error'; failure: Failure }
  /** `handoffStack`: the stack after a call of the step handed the conversation on (or back). */
  | { type: 'next_step'; toolCalls: number; loopSignature: string | null; handoffStack?: HandoffFrame[] }
  | { type: 'done' }
  | {
      type: 'need_approval';
      approvalId: string;
      reason: WaitReason;
      toolCalls: number;
      /** The highest risk among the calls waiting (absent in events sent before it existed). */
      risk?: Risk | null;
    }
  /** `by` names who decided, so a variant can ask for more than one approver. */
  | { type: 'approved'; approvalId: string; by?: string }
  /** The planner asked a question (a `human.ask` call): the run waits for its answer. */
  | { type: 'need_input'; approvalId: string; toolCalls: number }
  /** A person answered the question: the asking call has the answer as its result. */
  | { type: 'answered'; approvalId: string; by?: string }
  /** A person approved a step with arguments of theirs for one of its calls. */
  | { type: 'edited'; approvalId: string; by?: string }
  /** The child run a call started ended: its answer or failure is the call's result, its usage the parent's too. */
  | { type: 'child_ended'; approvalId: string; usage: ChildUsage }
  /** The work a call left running elsewhere (an MCP task) ended: the call is settled with its outcome. */
  | { type: 'task_ended'; approvalId: string }
  /** A person gave a call's result instead of running it; the step's other calls run. */
  | { type: 'responded'; approvalId: string; by?: string }
  /** A person raised the limits of a budget wait (and the deadline, for `timeout`): the run goes on. */
  | { type: 'extended'; approvalId: string; by?: string; limits: ExtendedLimits; deadlineAt?: number | null }
  /** No one decided in time: the outcome the wait was given (`escalate` is not sent: the wait goes on). */
  | { type: 'expired'; approvalId: string; outcome: Exclude<ExpiryOutcome, 'escalate'> }
  /** With `terminate` and `compensate`, the run undoes its completed calls before it ends. */
  | { type: 'rejected'; approvalId: string; terminate: boolean; by?: string; compensate?: boolean }
  | { type: 'exec_error'; failure: Failure }
  /** With `compensate`, the run undoes its completed calls (newest first) before it ends. */
  | { type: 'cancel'; reason?: string; compensate?: boolean }
  /** The executor finished compensating: the run ends as the cancel or rejection said. */
  | { type: 'compensated'; report: CompensationReport }
  | { type: 'timeout' }
  /** `toolCalls`: calls of the executor's step that ran before it stopped (counted in the usage). */
  | { type: 'budget_exceeded'; budget: BudgetName; toolCalls?: number }
  /** An operator asks the run to stop before its next step (a call in flight finishes first). */
  | { type: 'pause'; reason?: string; by?: string }
  /** An operator lets a paused run go on where it stopped. */
  | { type: 'resumed'; approvalId: string; by?: string };

/** The type of an event the run machine takes. */
export type MachineEventType = RunEvent['type'];

/**
 * Every event the run machine takes, for tables of legal and illegal transitions (the entries of
 * a run's log are another vocabulary: `LOG_EVENT_TYPES`).
 */
export const MACHINE_EVENT_TYPES = [
  'start',
  'plan_ready',
  'plan_error',
  'next_step',
  'done',
  'need_approval',
  'approved',
  'rejected',
  'need_input',
  'answered',
  'edited',
  'responded',
  'extended',
  'expired',
  'child_ended',
  'task_ended',
  'exec_error',
  'cancel',
  'timeout',
  'budget_exceeded',
  'compensated',
  'pause',
  'resumed',
] as const satisfies readonly MachineEventType[];

/** Input of the `planner` actor: one planning step of one run. */
export interface PlannerActorInput {
  runId: string;
  stepIndex: number;
  llmCalls: number;
  tokens: number;
  costUsd: number;
  limits: MachineLimits;
  /** The run's handoff stack: its top agent plans the step (absent or empty: the run's own agent). */
  handoffStack?: HandoffFrame[];
}

/** Input of the `executor` actor: the tool calls of one step. */
export interface ExecutorActorInput {
  runId: string;
  stepIndex: number;
  toolCalls: number;
  limits: MachineLimits;
  /** The run's handoff stack as the step began: a handoff call of the step pushes on it or pops it. */
  handoffStack?: HandoffFrame[];
  /** True when the executor undoes the run's completed calls instead of running a step's. */
  compensating?: boolean;
}

/** What the `deadline` actor is sent: the deadline moved (a person extended a run's time). */
export interface DeadlineMoved {
  type: 'deadline_moved';
  deadlineAt: number | null;
}

/** Input of the `deadline` actor: the run's absolute deadline, if any. */
export interface DeadlineActorInput {
  runId: string;
  deadlineAt: number | null;
}

/** Input of a durable timer (`durableDelay`): the stored instant and the event it sends then. */
export interface TimerActorInput {
  at: number | null;
  event: { type: string };
}

/** Events the planner actor resolves with. */
export type PlannerOutcome = Extract<RunEvent, { type: 'plan_ready' | 'plan_error' | 'budget_exceeded' }>;
/** Events the executor actor resolves with. */
export type ExecutorOutcome = Extract<
  RunEvent,
  { type: 'next_step' | 'done' | 'need_approval' | 'need_input' | 'exec_error' | 'budget_exceeded' | 'compensated' }
>;
