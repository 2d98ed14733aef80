import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, type Snapshot } from 'xstate';
import { MACHINE_VERSION, runMachine } from '../../machines/run-machine.js';
import { upgradeSnapshot } from '../../machines/upgrade-snapshot.js';
import type {
  DeadlineMoved,
  DeadlineActorInput,
  ExecutorActorInput,
  ExecutorOutcome,
  PlannerActorInput,
  PlannerOutcome,
} from '../../machines/types.js';

const limits = {
  maxSteps: 3,
  maxLlmCalls: null,
  maxToolCalls: null,
  maxTokens: null,
  maxCostUsd: null,
  loopThreshold: 3,
};
const usage = { inputTokens: 1, outputTokens: 1 };

/** The machine with actors that never settle, so tests drive it with events alone. */
function idleMachine(armed: DeadlineActorInput[] = [], moved: DeadlineMoved[] = []) {
  return runMachine.provide({
    actors: {
      planner: fromPromise<PlannerOutcome, PlannerActorInput>(() => new Promise(() => undefined)),
      executor: fromPromise<ExecutorOutcome, ExecutorActorInput>(() => new Promise(() => undefined)),
      deadline: fromCallback<DeadlineMoved, DeadlineActorInput>(({ input, receive }) => {
        armed.push(input);
        receive((event) => moved.push(event));
      }),
    },
  });
}

function started(options: { ask?: boolean; deadlineAt?: number; moved?: DeadlineMoved[] } = {}) {
  const actor = createActor(idleMachine([], options.moved), {
    input: {
      runId: 'r',
      limits: options.ask ? { ...limits, onBudgetExceeded: 'ask' as const } : limits,
      deadlineAt: options.deadlineAt ?? null,
    },
  });
  actor.start();
  actor.send({ type: 'start' });
  return actor;
}

/** Where a run is and what it waits on. */
function stateOf(actor: ReturnType<typeof started>) {
  const { value, context } = actor.getSnapshot();
  return {
    value,
    pendingApprovalId: context.pendingApprovalId,
    waitReason: context.waitReason,
    budgetWait: context.budgetWait,
    stepIndex: context.stepIndex,
    stopReason: context.stopReason,
  };
}

describe('run machine', () => {
  it('walks the happy path through the six public states', () => {
    const actor = started();
    expect(actor.getSnapshot().value).toBe('planning');
    actor.send({ type: 'plan_ready', stepIndex: 0, usage, final: false });
    expect(actor.getSnapshot().value).toBe('executing');
    actor.send({ type: 'need_approval', approvalId: 'a1', reason: 'approval', toolCalls: 0 });
    expect(actor.getSnapshot().context).toMatchObject({ pendingApprovalId: 'a1', waitReason: 'approval' });
    actor.send({ type: 'approved', approvalId: 'other' });
    expect(actor.getSnapshot().value).toBe('waiting_human');
    actor.send({ type: 'approved', approvalId: 'a1' });
    expect(actor.getSnapshot().value).toBe('executing');
    actor.send({ type: 'next_step', toolCalls: 1, loopSignature: null });
    expect(actor.getSnapshot().context).toMatchObject({ stepIndex: 1, toolCalls: 1, llmCalls: 1, tokens: 2 });
    actor.send({ type: 'plan_ready', stepIndex: 1, usage, final: true });
    actor.send({ type: 'done' });
    expect(actor.getSnapshot().value).toBe('succeeded');
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('fails with the matching stop reason from any active state', () => {
    for (const [event, reason] of [
      [{ type: 'cancel' }, 'cancelled'],
      [{ type: 'timeout' }, 'timeout'],
      [{ type: 'budget_exceeded', budget: 'max_tokens' }, 'budget_exceeded'],
    ] as const) {
      const actor = started();
      actor.send(event);
      expect(actor.getSnapshot().value).toBe('failed');
      expect(actor.getSnapshot().context.stopReason).toBe(reason);
    }
  });

  it('detects a loop on the third identical failing step and stops at maxSteps', () => {
    const actor = started();
    for (let i = 0; i < 2; i += 1) {
      actor.send({ type: 'plan_ready', stepIndex: i, usage, final: false });
      actor.send({ type: 'next_step', toolCalls: 0, loopSignature: 'same' });
    }
    actor.send({ type: 'plan_ready', stepIndex: 2, usage, final: false });
    actor.send({ type: 'next_step', toolCalls: 0, loopSignature: 'same' });
    expect(actor.getSnapshot().context.stopReason).toBe('loop_detected');

    const other = started();
    for (let i = 0; i < 3; i += 1) {
      other.send({ type: 'plan_ready', stepIndex: i, usage, final: false });
      other.send({ type: 'next_step', toolCalls: 0, loopSignature: `sig${i}` });
    }
    expect(other.getSnapshot().context.stopReason).toBe('max_steps');
  });

  it('refuses events a state does not take', () => {
    const actor = started();
    expect(actor.getSnapshot().can({ type: 'done' })).toBe(false);
    expect(actor.getSnapshot().can({ type: 'approved', approvalId: 'x' })).toBe(false);
    expect(actor.getSnapshot().can({ type: 'cancel' })).toBe(true);
  });

  it('hands a budget that ran out to a person, one wait id each time, and goes on where it stopped', () => {
    const actor = started({ ask: true });
    actor.send({ type: 'budget_exceeded', budget: 'max_llm_calls' });
    expect(stateOf(actor)).toMatchObject({
      value: 'waiting_human',
      pendingApprovalId: 'r.budget.1',
      waitReason: 'budget',
      budgetWait: { budget: 'max_llm_calls', resume: 'planning' },
    });
    // Not this wait's id, or not a decision a budget wait takes: nothing moves.
    actor.send({ type: 'extended', approvalId: 'r.budget.2', limits: { maxLlmCalls: 2 } });
    actor.send({ type: 'answered', approvalId: 'r.budget.1' });
    actor.send({ type: 'edited', approvalId: 'r.budget.1' });
    expect(stateOf(actor)).toMatchObject({ value: 'waiting_human', pendingApprovalId: 'r.budget.1' });
    actor.send({ type: 'extended', approvalId: 'r.budget.1', limits: { maxLlmCalls: 2 } });
    expect(stateOf(actor)).toMatchObject({ value: 'planning', pendingApprovalId: null, budgetWait: null });
    expect(actor.getSnapshot().context.limits).toEqual({ ...limits, onBudgetExceeded: 'ask', maxLlmCalls: 2 });

    actor.send({ type: 'plan_ready', stepIndex: 0, usage, final: false });
    actor.send({ type: 'budget_exceeded', budget: 'max_tool_calls', toolCalls: 2 });
    expect(stateOf(actor)).toMatchObject({
      value: 'waiting_human',
      pendingApprovalId: 'r.budget.2',
      budgetWait: { budget: 'max_tool_calls', resume: 'executing' },
    });
    // The calls that ran before the budget ran out count.
    expect(actor.getSnapshot().context).toMatchObject({ toolCalls: 2, budgetAsks: 2 });
    actor.send({ type: 'extended', approvalId: 'r.budget.2', limits: { maxToolCalls: 3 } });
    expect(stateOf(actor)).toMatchObject({ value: 'executing', stepIndex: 0, waitReason: null });
    expect(actor.getSnapshot().context.limits).toMatchObject({ maxLlmCalls: 2, maxToolCalls: 3 });
  });

  it('hands the step limit to a person: extended, the run plans its next step under the new limit', () => {
    const actor = started({ ask: true });
    for (let i = 0; i < 3; i += 1) {
      actor.send({ type: 'plan_ready', stepIndex: i, usage, final: false });
      actor.send({ type: 'next_step', toolCalls: 1, loopSignature: null });
    }
    expect(stateOf(actor)).toMatchObject({
      value: 'waiting_human',
      pendingApprovalId: 'r.budget.1',
      budgetWait: { budget: 'max_steps', resume: 'planning' },
      stepIndex: 3,
    });
    expect(actor.getSnapshot().context.toolCalls).toBe(3);
    actor.send({ type: 'extended', approvalId: 'r.budget.1', limits: { maxSteps: 4 } });
    expect(stateOf(actor)).toMatchObject({ value: 'planning', stepIndex: 3 });
    actor.send({ type: 'plan_ready', stepIndex: 3, usage, final: false });
    actor.send({ type: 'next_step', toolCalls: 0, loopSignature: null });
    expect(stateOf(actor)).toMatchObject({ value: 'waiting_human', pendingApprovalId: 'r.budget.2', stepIndex: 4 });
  });

  it('extends a run that waits on its deadline: the deadline actor is re-armed with the new instant', () => {
    const moved: DeadlineMoved[] = [];
    const actor = started({ ask: true, deadlineAt: 1_000, moved });
    actor.send({ type: 'plan_ready', stepIndex: 0, usage, final: false });
    actor.send({ type: 'timeout' });
    expect(stateOf(actor)).toMatchObject({
      value: 'waiting_human',
      pendingApprovalId: 'r.budget.1',
      budgetWait: { budget: 'timeout', resume: 'executing' },
    });
    // A restored run's deadline actor fires again at once: the wait it is in is not ended by it.
    actor.send({ type: 'timeout' });
    expect(stateOf(actor)).toMatchObject({ value: 'waiting_human', stopReason: null });
    expect(moved).toEqual([]);
    actor.send({ type: 'extended', approvalId: 'r.budget.1', limits: {}, deadlineAt: 5_000 });
    expect(stateOf(actor)).toMatchObject({ value: 'executing', stepIndex: 0 });
    expect(actor.getSnapshot().context.deadlineAt).toBe(5_000);
    expect(moved).toEqual([{ type: 'deadline_moved', deadlineAt: 5_000 }]);
    // Past the new deadline, and nobody there to ask: a compensating run ends.
    actor.send({ type: 'cancel', compensate: true });
    actor.send({ type: 'timeout' });
    expect(stateOf(actor)).toMatchObject({ value: 'failed', stopReason: 'timeout' });
  });

  it('ends a budget wait a person ends or lets expire: with the budget, or with the expiry', () => {
    const ended = started({ ask: true });
    ended.send({ type: 'budget_exceeded', budget: 'max_tokens' });
    ended.send({ type: 'rejected', approvalId: 'r.budget.1', terminate: true, by: 'alice' });
    expect(stateOf(ended)).toMatchObject({ value: 'failed', stopReason: 'budget_exceeded', budgetWait: null });
    expect(ended.getSnapshot().context.failure).toMatchObject({ code: 'run.budget_exceeded' });

    const lapsed = started({ ask: true, deadlineAt: 1_000 });
    lapsed.send({ type: 'timeout' });
    lapsed.send({ type: 'expired', approvalId: 'r.budget.1', outcome: 'reject' });
    expect(stateOf(lapsed)).toMatchObject({ value: 'failed', stopReason: 'timeout', pendingApprovalId: null });

    const gone = started({ ask: true });
    gone.send({ type: 'budget_exceeded', budget: 'max_cost_usd' });
    gone.send({ type: 'expired', approvalId: 'r.budget.1', outcome: 'end' });
    expect(stateOf(gone)).toMatchObject({ value: 'failed', stopReason: 'expired' });
    expect(gone.getSnapshot().context.failure).toMatchObject({ code: 'approval.expired' });
  });

  it('applies an expiry as its outcome says: reject tells the model, end fails the run', () => {
    const step = (actor: ReturnType<typeof started>, i: number) => {
      actor.send({ type: 'plan_ready', stepIndex: i, usage, final: false });
      actor.send({ type: 'need_approval', approvalId: `a${i}`, reason: 'approval', toolCalls: 0 });
    };
    const skipped = started();
    step(skipped, 0);
    skipped.send({ type: 'expired', approvalId: 'a0', outcome: 'reject' });
    expect(stateOf(skipped)).toMatchObject({ value: 'planning', stepIndex: 1, pendingApprovalId: null });
    // The last step's approval expires: the step counts, the run reaches its limit.
    for (let i = 1; i < 3; i += 1) {
      step(skipped, i);
      skipped.send({ type: 'expired', approvalId: `a${i}`, outcome: 'reject' });
    }
    expect(stateOf(skipped)).toMatchObject({ value: 'failed', stopReason: 'max_steps' });

    const asked = started();
    asked.send({ type: 'plan_ready', stepIndex: 0, usage, final: false });
    asked.send({ type: 'need_input', approvalId: 'q0', toolCalls: 1 });
    expect(stateOf(asked)).toMatchObject({ value: 'waiting_human', waitReason: 'input', pendingApprovalId: 'q0' });
    expect(asked.getSnapshot().context.toolCalls).toBe(1);
    asked.send({ type: 'expired', approvalId: 'q0', outcome: 'reject' });
    // A question no one answered: the same step goes on, the asking call told so.
    expect(stateOf(asked)).toMatchObject({ value: 'executing', stepIndex: 0, waitReason: null });

    const ended = started();
    step(ended, 0);
    ended.send({ type: 'expired', approvalId: 'other', outcome: 'end' });
    expect(stateOf(ended)).toMatchObject({ value: 'waiting_human' });
    ended.send({ type: 'expired', approvalId: 'a0', outcome: 'end' });
    expect(stateOf(ended)).toMatchObject({ value: 'failed', stopReason: 'expired', pendingApprovalId: null });
  });

  it('takes an answer only on a question, an edit or a response only on a step approval', () => {
    const asked = started();
    asked.send({ type: 'plan_ready', stepIndex: 0, usage, final: false });
    asked.send({ type: 'need_input', approvalId: 'q0', toolCalls: 0 });
    for (const type of ['edited', 'responded'] as const) {
      asked.send({ type, approvalId: 'q0' });
      expect(stateOf(asked)).toMatchObject({ value: 'waiting_human' });
    }
    asked.send({ type: 'answered', approvalId: 'q0', by: 'alice' });
    expect(stateOf(asked)).toMatchObject({ value: 'executing', waitReason: null });

    for (const type of ['edited', 'responded'] as const) {
      const approval = started();
      approval.send({ type: 'plan_ready', stepIndex: 0, usage, final: false });
      approval.send({ type: 'need_approval', approvalId: 'a0', reason: 'policy', toolCalls: 0 });
      approval.send({ type: 'answered', approvalId: 'a0' });
      expect(stateOf(approval)).toMatchObject({ value: 'waiting_human' });
      approval.send({ type, approvalId: 'a0', by: 'alice' });
      expect(stateOf(approval)).toMatchObject({ value: 'executing', pendingApprovalId: null });
    }
  });

  it('cancelling a budget wait with compensation leaves no budget wait behind', () => {
    const actor = started({ ask: true });
    actor.send({ type: 'budget_exceeded', budget: 'max_llm_calls' });
    actor.send({ type: 'cancel', compensate: true });
    expect(stateOf(actor)).toMatchObject({ value: 'executing', waitReason: null, budgetWait: null });
    actor.send({ type: 'compensated', report: { compensated: [], failed: [], notCompensated: [] } });
    expect(stateOf(actor)).toMatchObject({ value: 'failed', stopReason: 'cancelled' });
  });

  it('restores a saved version-1 snapshot, upgraded, and re-arms its deadline', () => {
    const fixture = JSON.parse(
      readFileSync(new URL('../fixtures/snapshots/v1-waiting-human.json', import.meta.url), 'utf8'),
    ) as Snapshot<unknown> & { context: { pendingApprovalId: string; deadlineAt: number } };
    const armed: DeadlineActorInput[] = [];
    const snapshot = upgradeSnapshot(fixture, 1) as Snapshot<unknown>;
    const actor = createActor(idleMachine(armed), { snapshot, input: undefined as never });
    actor.start();
    expect(actor.getSnapshot().value).toBe('waiting_human');
    expect(actor.getSnapshot().context).toMatchObject({ costUsd: 0, limits: { maxCostUsd: null } });
    expect(armed).toEqual([
      { runId: fixture.context.pendingApprovalId.split('.')[0], deadlineAt: fixture.context.deadlineAt },
    ]);
    actor.send({ type: 'approved', approvalId: fixture.context.pendingApprovalId });
    expect(actor.getSnapshot().value).toBe('executing');
  });

  it('restores a saved version-2 snapshot as it is', () => {
    expect(MACHINE_VERSION).toBe(2);
    const fixture = JSON.parse(
      readFileSync(new URL('../fixtures/snapshots/v2-waiting-human.json', import.meta.url), 'utf8'),
    ) as Snapshot<unknown> & { context: { pendingApprovalId: string } };
    expect(upgradeSnapshot(fixture, 2)).toEqual(fixture);
    const actor = createActor(idleMachine(), { snapshot: fixture, input: undefined as never });
    actor.start();
    expect(actor.getSnapshot().value).toBe('waiting_human');
    actor.send({ type: 'rejected', approvalId: fixture.context.pendingApprovalId, terminate: true });
    expect(actor.getSnapshot().context.stopReason).toBe('rejected');
  });

  it('refuses a snapshot of a newer machine', () => {
    expect(() => upgradeSnapshot({}, MACHINE_VERSION + 1)).toThrow(/newer than this machine/);
  });
});
