/**
 * The transition model of Baton's run machine: which events to try in each state (one concrete
 * event per guard branch the machine can take), and small limits so that `max_steps` and
 * `loop_detected` are reachable in a few steps.
 */
import type { AnyStateMachine, SnapshotFrom } from 'xstate';
import { runMachine } from '../../machines/run-machine.js';
import { statusOf } from '../../machines/run-status.js';
import { RUN_CONTEXT_KEYS, type RunMachineDefinition } from '../../machines/variants.js';
import { MACHINE_EVENT_TYPES, type MachineLimits, type RunEvent } from '../../machines/types.js';
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

/** Who decides in the model: two different people, so a variant can tell them apart. */
export const MODEL_APPROVERS = ['approver-a', 'approver-b'] as const;

/** The signature the model gives a step whose calls all failed the same way. */
export const LOOP_SIGNATURE = 'same-failing-call';

export type RunSnapshot = SnapshotFrom<typeof runMachine>;
export type RunPath = ModelPath<RunSnapshot, RunEvent>;

const failure: Failure = { code: 'internal.error', kind: 'system', message: 'modelled failure' };
const usage = { inputTokens: 1, outputTokens: 1 };

/** The events worth trying in a state: one per way the runtime can produce each event type. */
export function runModelEvents(snapshot: RunSnapshot): RunEvent[] {
  const { stepIndex, pendingApprovalId } = snapshot.context;
  const approvalId = pendingApprovalId ?? 'none';
  return [
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
  ];
}

/**
 * Two snapshots are the same state of the model when these agree: the state, the counters that
 * guards read, and a variant's own context fields (not the instants of its durable delays,
 * which differ on every exploration).
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
    c.stopReason,
    c.compensation ? c.compensation.reason : '',
    JSON.stringify(own),
  ].join('|');
}

const STOCK_CONTEXT: ReadonlySet<string> = new Set(RUN_CONTEXT_KEYS);

/**
 * The transition model of a run machine (Baton's own by default, or an embedder's variant
 * that keeps its events, given as its definition or as the bare machine): every transition
 * and paths that cover them.
 */
export function createRunModel(machine: AnyStateMachine | RunMachineDefinition = runMachine) {
  machine = 'machine' in machine ? machine.machine : machine;
  const edges = listTransitions(machine, MACHINE_EVENT_TYPES);
  const { paths, covered, uncovered } = coverTransitions<RunSnapshot, RunEvent>(machine, edges, {
    input: { runId: 'model', limits: MODEL_LIMITS, deadlineAt: null },
    events: runModelEvents,
    serialize: serializeRunState,
  });
  return { edges, paths, covered, uncovered };
}
