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
  RunEvent,
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
function idleMachine(armed: DeadlineActorInput[] = []) {
  return runMachine.provide({
    actors: {
      planner: fromPromise<PlannerOutcome, PlannerActorInput>(() => new Promise(() => undefined)),
      executor: fromPromise<ExecutorOutcome, ExecutorActorInput>(() => new Promise(() => undefined)),
      deadline: fromCallback<DeadlineMoved, DeadlineActorInput>(({ input }) => {
        armed.push(input);
      }),
    },
  });
}

function started() {
  const actor = createActor(idleMachine(), { input: { runId: 'r', limits, deadlineAt: null } });
  actor.start();
  actor.send({ type: 'start' });
  return actor;
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
