import { describe, expect, it } from 'vitest';
import { createMachine, getInitialSnapshot } from 'xstate';
import { runMachine } from '../../machines/run-machine.js';
import { MACHINE_EVENT_TYPES } from '../../machines/types.js';
import { DEFAULTS } from '../../src/defaults.js';
import {
  coverTransitions,
  createRunModel,
  listTransitions,
  MODEL_ASK_LIMITS,
  MODEL_LIMITS,
  runModelEvents,
  serializeRunState,
} from '../../src/testing/index.js';

describe('run machine transition model', () => {
  it('covers every legal transition of the machine with generated paths', () => {
    const model = createRunModel();
    console.log(`transitions covered: ${model.covered.size}/${model.edges.length} by ${model.paths.length} paths`);
    expect(model.uncovered.map((e) => e.id)).toEqual([]);
    expect(model.covered.size).toBe(model.edges.length);
    // Every state, every event type and every guard branch appears among the edges.
    expect(new Set(model.edges.map((e) => e.source))).toEqual(
      new Set(['pending', 'planning', 'executing', 'waiting_human']),
    );
    expect(new Set(model.edges.map((e) => e.event))).toEqual(new Set(MACHINE_EVENT_TYPES));
    expect(model.edges.filter((e) => e.event === 'next_step').map((e) => e.guard)).toEqual([
      'isLoop',
      'and(isLastStep, asksOnBudget)',
      'isLastStep',
      'pauseAsked',
      null,
    ]);
    // An operator's pause is asked in every active state and reached at either step boundary.
    expect(model.edges.filter((e) => e.event === 'pause').map((e) => e.source)).toEqual([
      'planning',
      'executing',
      'waiting_human',
    ]);
    expect(
      model.edges.filter((e) => e.target === 'waiting_human' && e.guard === 'pauseAsked').map((e) => e.event),
    ).toEqual(['plan_ready', 'next_step']);
  });

  it('covers the edges of a budget handed to a person only from the run that asks', () => {
    const model = createRunModel();
    // Explored from the failing run alone, these are out of reach: every edge into a budget
    // wait, and every decision on one.
    const failing = coverTransitions(runMachine, model.edges, {
      input: { runId: 'model', limits: MODEL_LIMITS, deadlineAt: null },
      events: runModelEvents,
      serialize: serializeRunState,
    });
    expect(failing.uncovered.map((e) => e.id).sort()).toEqual(
      [
        'planning --timeout[and(asksOnBudget, not(isCompensating))]--> waiting_human',
        'planning --budget_exceeded[asksOnBudget]--> waiting_human',
        'executing --timeout[and(asksOnBudget, not(isCompensating))]--> waiting_human',
        'executing --budget_exceeded[asksOnBudget]--> waiting_human',
        'executing --next_step[and(isLastStep, asksOnBudget)]--> waiting_human',
        'waiting_human --extended[and(isPendingApproval, isBudgetWait, resumesPlanning)]--> planning',
        'waiting_human --extended[and(isPendingApproval, isBudgetWait)]--> executing',
        'waiting_human --rejected[and(isPendingApproval, isBudgetWait)]--> failed',
        'waiting_human --expired[and(isPendingApproval, isBudgetWait)]--> failed',
      ].sort(),
    );
    // Every path that takes one of them starts with the limits that ask.
    for (const path of model.paths) {
      const limits = path.steps[0]!.before.context.limits;
      if (path.steps.some((s) => failing.uncovered.some((e) => e.id === s.edge.id))) {
        expect(limits).toEqual(MODEL_ASK_LIMITS);
      } else expect([MODEL_LIMITS, MODEL_ASK_LIMITS]).toContainEqual(limits);
    }
    expect(model.paths.some((p) => p.steps[0]!.before.context.limits.onBudgetExceeded === undefined)).toBe(true);
  });

  it('tries on each wait only the decisions the runtime takes on it', () => {
    const types = (waitReason: string, budget?: string) =>
      new Set(
        runModelEvents({
          value: 'waiting_human',
          context: {
            ...getInitialSnapshot(runMachine, { runId: 'model', limits: MODEL_ASK_LIMITS, deadlineAt: null }).context,
            waitReason,
            pendingApprovalId: 'w',
            budgetWait: budget ? { budget, resume: 'planning' } : null,
          },
        } as never).map((e) => e.type),
      );
    const decisions = ['approved', 'edited', 'responded', 'answered', 'extended', 'rejected', 'expired'];
    const only = (set: Set<string>) => decisions.filter((d) => set.has(d));
    expect(only(types('approval'))).toEqual(['approved', 'edited', 'responded', 'rejected', 'expired']);
    expect(only(types('uncertain_side_effect'))).toEqual(['approved', 'rejected']);
    expect(only(types('input'))).toEqual(['answered', 'rejected', 'expired']);
    expect(only(types('budget', 'max_llm_calls'))).toEqual(['extended', 'rejected', 'expired']);
    // The deadline a run waits on has passed: no second timeout comes.
    expect(types('budget', 'max_llm_calls').has('timeout')).toBe(true);
    expect(types('budget', 'timeout').has('timeout')).toBe(false);
  });

  it('models the limits the runtime enforces', () => {
    expect(MODEL_LIMITS.loopThreshold).toBe(DEFAULTS.loopThreshold);
  });

  it('reports a transition added to a variant of the machine that no path can take', () => {
    // One more guarded branch, taken only with context that no event of the model produces.
    const config = runMachine.config as { states: Record<string, { on: Record<string, unknown> }> };
    const executing = config.states.executing!;
    const variant = createMachine(
      {
        ...(runMachine.config as object),
        states: {
          ...config.states,
          executing: {
            ...executing,
            on: {
              ...executing.on,
              next_step: [{ guard: 'isHuge', target: 'succeeded' }, ...(executing.on.next_step as unknown[])],
            },
          },
        },
      } as never,
      {
        ...runMachine.implementations,
        guards: {
          ...runMachine.implementations.guards,
          isHuge: ({ context }: { context: { tokens: number } }) => context.tokens > 1_000_000,
        },
      } as never,
    );
    const model = createRunModel(variant);
    expect(model.edges).toHaveLength(createRunModel().edges.length + 1);
    expect(model.uncovered.map((e) => e.id)).toEqual(['executing --next_step[isHuge]--> succeeded']);
    expect(listTransitions(variant, ['next_step']).map((e) => e.guard)).toEqual([
      'isHuge',
      'isLoop',
      'and(isLastStep, asksOnBudget)',
      'isLastStep',
      'pauseAsked',
      null,
    ]);
  });
});
