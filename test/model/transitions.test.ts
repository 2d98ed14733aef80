import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { runMachine } from '../../machines/run-machine.js';
import { MACHINE_EVENT_TYPES } from '../../machines/types.js';
import { DEFAULTS } from '../../src/defaults.js';
import { createRunModel, listTransitions, MODEL_LIMITS } from '../../src/testing/index.js';

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
      'isLastStep',
      null,
    ]);
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
      'isLastStep',
      null,
    ]);
  });
});
