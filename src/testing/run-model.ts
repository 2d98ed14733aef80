/**
 * The transition model of Baton's run machine: which events to try in each state (one concrete
 * event per guard branch the machine can take, and per decision a person can make on the wait
 * at hand), and small limits so that `max_steps` and `loop_detected` are reachable in a few
 * steps. Runs are explored twice: failing when a budget runs out, and asking a person then.
 */
import { getInitialSnapshot, type AnyStateMachine, type SnapshotFrom } from 'xstate';
import { runMachine } from '../../machines/run-machine.js';
import { statusOf } from '../../machines/run-status.js';
import { RUN_CONTEXT_KEYS, type RunMachineDefinition } from '../../machines/variants.js';
import {
  MACHINE_EVENT_TYPES,
  type ExtendedLimits,
  type MachineLimits,
  type RunContext,
  type RunEvent,
  type WaitReason,
} from '../../machines/types.js';
import type { Failure } from '../failure.js';
import { coverTransitions, listTransitions, type ModelPath } from './transition-model.js';

/** Limits of the modelled runs; the path runner starts its runs with the same. */
export const MODEL_LIMITS: MachineLimits = {
  maxSteps: 4,
  maxLlmCalls: null,
  maxToolCalls: null,
  maxTokens: null,
  maxCostUsd: null,
  loopThreshold: 3,
};

/** The same limits, with a budget that runs out handed to a person (`onBudgetExceeded: 'ask'`). */
export const MODEL_ASK_LIMITS: MachineLimits = { ...MODEL_LIMITS, onBudgetExceeded: 'ask' };

/** Who decides in the model: two different people, so a variant can tell them apart. */
export const MODEL_APPROVERS = ['approver-a', 'approver-b'] as const;

/** The signature the model gives a step whose calls all failed the same way. */
export const LOOP_SIGNATURE = 'same-failing-call';

export type RunSnapshot = SnapshotFrom<typeof runMachine>;
export type RunPath = ModelPath<RunSnapshot, RunEvent>;

const failure: Failure = { code: 'internal.error', kind: 'system', message: 'modelled failure' };
const usage = { inputTokens: 1, outputTokens: 1 };
/** What the model's child run uses: the one planner call that answers. */
export const CHILD_USAGE = { llmCalls: 1, toolCalls: 0, tokens: 2, costUsd: 0 };

/** The events worth trying in a state: one per way the runtime can produce each event type. */
export function runModelEvents(snapshot: RunSnapshot): RunEvent[] {
  const { context } = snapshot;
  const { stepIndex, pendingApprovalId } = context;
  const approvalId = pendingApprovalId ?? 'none';
  const events: RunEvent[] = [
    { type: 'start' },
    { type: 'plan_ready', stepIndex, usage, final: false },
    { type: 'plan_error', failure },
    { type: 'next_step', toolCalls: 1, loopSignature: null },
    { type: 'next_step', toolCalls: 0, loopSignature: LOOP_SIGNATURE },
    { type: 'done' },
    { type: 'need_approval', approvalId: `approval-${stepIndex}`, reason: 'approval', toolCalls: 0, risk: 'high' },
    {
      type: 'need_approval',
      approvalId: `approval-${stepIndex}`,
      reason: 'approval',
      toolCalls: 0,
      risk: 'destructive',
    },
    {
      type: 'need_approval',
      approvalId: `uncertain-${stepIndex}`,
      reason: 'uncertain_side_effect',
      toolCalls: 0,
      risk: 'low',
    },
    // Two approvers, for variants that ask more than one (Baton's machine takes either the same way).
    { type: 'approved', approvalId, by: MODEL_APPROVERS[0] },
    { type: 'approved', approvalId, by: MODEL_APPROVERS[1] },
    { type: 'rejected', approvalId, terminate: true },
    { type: 'rejected', approvalId, terminate: true, compensate: true },
    { type: 'rejected', approvalId, terminate: false },
    { type: 'exec_error', failure },
    { type: 'cancel' },
    { type: 'cancel', compensate: true },
    // The executor's answer once it has undone what it could (nothing, in the model's runs).
    { type: 'compensated', report: { compensated: [], failed: [], notCompensated: [] } },
    { type: 'timeout' },
    { type: 'budget_exceeded', budget: statusOf(snapshot.value) === 'planning' ? 'max_llm_calls' : 'max_tool_calls' },
    // A call of an agent tool starts a child run and waits for it; the child ends (one planner call).
    { type: 'need_approval', approvalId: `child-${stepIndex}`, reason: 'child', toolCalls: 1, risk: 'low' },
    { type: 'child_ended', approvalId, usage: CHILD_USAGE },
    // A call whose work goes on elsewhere (a task) lets go; a poll finds the work ended.
    { type: 'need_approval', approvalId: `task-${stepIndex}`, reason: 'task', toolCalls: 1, risk: 'low' },
    { type: 'task_ended', approvalId },
    // The planner asks a question (a `human.ask` call), and what a person does with each wait.
    { type: 'need_input', approvalId: `input-${stepIndex}`, toolCalls: 0 },
    { type: 'answered', approvalId, by: MODEL_APPROVERS[0] },
    { type: 'edited', approvalId, by: MODEL_APPROVERS[0] },
    { type: 'responded', approvalId, by: MODEL_APPROVERS[0] },
    { type: 'extended', approvalId, by: MODEL_APPROVERS[0], limits: extensionOf(context) },
    { type: 'expired', approvalId, outcome: 'reject' },
    { type: 'expired', approvalId, outcome: 'end' },
    // An operator pauses the run (it stops at its next step boundary) and resumes it.
    { type: 'pause', reason: 'model pause', by: MODEL_APPROVERS[1] },
    { type: 'resumed', approvalId, by: MODEL_APPROVERS[1] },
  ];
  return events.filter((event) => producible(event, context));
}

/**
 * What a person raises on a budget wait: exactly the budget that ran out, one past what is used.
 * A new deadline is the runtime's to set (from the `timeoutMs` a person gives).
 */
function extensionOf(context: RunContext): ExtendedLimits {
  switch (context.budgetWait?.budget) {
    case 'max_steps':
      return { maxSteps: context.stepIndex + 1 };
    case 'max_llm_calls':
      return { maxLlmCalls: context.llmCalls + 1 };
    case 'max_tool_calls':
      return { maxToolCalls: context.toolCalls + 1 };
    case 'max_tokens':
      return { maxTokens: context.tokens + 1 };
    case 'max_cost_usd':
      return { maxCostUsd: context.costUsd + 1 };
    default:
      return {};
  }
}

/** The decisions the runtime takes on each kind of wait (others are refused before the machine sees them). */
const DECIDED_BY: Record<WaitReason, readonly RunEvent['type'][]> = {
  approval: ['approved', 'edited', 'responded', 'rejected', 'expired'],
  policy: ['approved', 'edited', 'responded', 'rejected', 'expired'],
  // No expiry: an interrupted call's outcome is known only to a person.
  uncertain_side_effect: ['approved', 'rejected'],
  tool_version_mismatch: ['approved', 'rejected'],
  input: ['answered', 'rejected', 'expired'],
  budget: ['extended', 'rejected', 'expired'],
  // No expiry: whether to repeat an effect the source run had is a person's to say.
  repeat_effect: ['approved', 'rejected'],
  // Decided by the child run's end, never by a person.
  child: ['child_ended'],
  // Decided by a poll that finds the call's work elsewhere ended, never by a person.
  task: ['task_ended'],
  // Decided by an operator's resume (or ended by a cancel, like any wait).
  paused: ['resumed'],
};
const DECISIONS: ReadonlySet<string> = new Set<string>(Object.values(DECIDED_BY).flat());

/** False for an event the runtime never sends in this context, so the model does not explore it. */
function producible(event: RunEvent, context: RunContext): boolean {
  // A compensating executor spends no budget.
  if (event.type === 'budget_exceeded') return !context.compensation;
  // One pause a run is enough to reach every place a pause is asked and honoured.
  if (event.type === 'pause') return (context.pauses ?? 0) === 0;
  if (context.waitReason === null) return true;
  // The deadline of a run waiting on it has passed already: only an extension moves it.
  if (event.type === 'timeout') return context.budgetWait?.budget !== 'timeout';
  if (!DECISIONS.has(event.type)) return true;
  // A wait of a variant's own: every decision is tried.
  if (!(DECIDED_BY[context.waitReason]?.includes(event.type) ?? true)) return false;
  if (context.waitReason !== 'budget') return true;
  // A budget wait is ended (`end`: a terminating rejection) or extended; once the step limit was
  // raised, no more (each extension of it adds steps: the model's runs would never end).
  if (event.type === 'rejected') return event.terminate && !event.compensate;
  if (event.type === 'extended') return context.limits.maxSteps === MODEL_LIMITS.maxSteps;
  return true;
}

/**
 * Two snapshots are the same state of the model when these agree: the state, the counters and
 * limits that guards read (the step limit, whether a budget that runs out asks a person), the
 * kind of wait (and for a budget wait, which budget and where it resumes), and a variant's own
 * context fields (not the instants of its durable delays, which differ on every exploration).
 */
export function serializeRunState(snapshot: RunSnapshot): string {
  const c = snapshot.context;
  const own = Object.entries(c as unknown as Record<string, unknown>).filter(
    ([key]) => !STOCK_CONTEXT.has(key) && key !== 'timers',
  );
  return [
    JSON.stringify(snapshot.value),
    c.stepIndex,
    c.loopSignature,
    c.loopCount,
    c.waitReason,
    c.budgetWait ? `${c.budgetWait.budget}>${c.budgetWait.resume}` : '',
    c.pauseAsk ? 'pause asked' : '',
    c.pauseWait ? `paused>${c.pauseWait.resume}` : '',
    c.pauses ?? 0,
    c.limits.maxSteps,
    c.limits.onBudgetExceeded ?? 'fail',
    c.stopReason,
    c.compensation ? c.compensation.reason : '',
    JSON.stringify(own),
  ].join('|');
}

/** Baton's own context fields: those a variant must keep, and the optional ones its machine starts with. */
const STOCK_CONTEXT: ReadonlySet<string> = new Set([
  ...RUN_CONTEXT_KEYS,
  ...Object.keys(getInitialSnapshot(runMachine, { runId: 'model', limits: MODEL_LIMITS, deadlineAt: null }).context),
]);

/**
 * The transition model of a run machine (Baton's own by default, or an embedder's variant
 * that keeps its events, given as its definition or as the bare machine): every transition
 * and paths that cover them, explored from a run that fails when a budget runs out and from
 * one that asks a person then.
 */
export function createRunModel(machine: AnyStateMachine | RunMachineDefinition = runMachine) {
  machine = 'machine' in machine ? machine.machine : machine;
  const edges = listTransitions(machine, MACHINE_EVENT_TYPES);
  const { paths, covered, uncovered } = coverTransitions<RunSnapshot, RunEvent>(machine, edges, {
    inputs: [MODEL_LIMITS, MODEL_ASK_LIMITS].map((limits) => ({ runId: 'model', limits, deadlineAt: null })),
    events: runModelEvents,
    serialize: serializeRunState,
  });
  return { edges, paths, covered, uncovered };
}
