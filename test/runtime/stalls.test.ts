/**
 * No long stalls, shown by counting: a run whose planner and tool never wait still lets the
 * event loop turn between its steps and commits as it goes, and a burst of `start()` calls
 * resolves commit by commit instead of all at the end.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { MAX_BATCH_UNITS } from '../../src/store/commit-queue.js';
import { admitStart, STARTS_PER_TURN, YIELD_EVERY_STEPS } from '../../src/runtime/drive/yield-turn.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { turnCounter } from '../helpers/turns.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'answers at once',
  input: z.object({ n: z.number() }),
  effect: 'read',
  risk: 'low',
  execute: ({ n }) => ({ n }),
});

describe('no long stalls', () => {
  it('turns the event loop and commits between the steps of a run that never waits', async () => {
    const steps = 300;
    const { db } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner((request) =>
        request.stepIndex < steps
          ? { type: 'tool_calls', calls: [{ tool: 'lookup', args: { n: request.stepIndex } }] }
          : { type: 'final', answer: 'done' },
      ),
      tools: [lookup],
    });
    const commitsBefore = runtime.stats().commits;
    const counter = turnCounter();
    const run = await runtime.start({ input: 'x', options: { maxSteps: steps + 1 } });
    const ended = await runtime.wait(run.id);
    const turns = counter.stop();
    expect(ended.status).toBe('succeeded');
    // At least one turn, and one commit, every YIELD_EVERY_STEPS steps.
    expect(turns).toBeGreaterThanOrEqual(steps / YIELD_EVERY_STEPS);
    expect(runtime.stats().commits - commitsBefore).toBeGreaterThanOrEqual(steps / YIELD_EVERY_STEPS);
  });

  it('resolves a burst of start() calls as their own commits land', async () => {
    const { db } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([{ type: 'final', answer: 'done' }]),
      tools: [lookup],
    });
    const burst = 3 * MAX_BATCH_UNITS;
    const resolvedAt: number[] = [];
    const base = runtime.stats().commits;
    const runs = await Promise.all(
      Array.from({ length: burst }, (_, i) =>
        runtime.start({ input: `run ${i}`, sessionId: `s${i}` }).then((run) => {
          resolvedAt.push(runtime.stats().commits - base);
          return run;
        }),
      ),
    );
    // The first start was answered after the first commits, long before the last one.
    expect(Math.min(...resolvedAt)).toBeLessThan(Math.max(...resolvedAt));
    expect(new Set(resolvedAt).size).toBeGreaterThanOrEqual(3);
    const settled = await Promise.all(runs.map((run) => runtime.wait(run.id)));
    expect(settled.every((run) => run.status === 'succeeded')).toBe(true);
  });

  it('lets a burst of starts through a batch a turn, first come first served', async () => {
    const counter = turnCounter();
    const order: number[] = [];
    await Promise.all(Array.from({ length: 5 * STARTS_PER_TURN }, (_, i) => admitStart().then(() => order.push(i))));
    const turns = counter.stop();
    expect(order).toEqual(Array.from({ length: 5 * STARTS_PER_TURN }, (_, i) => i));
    // Five batches need at least four more turns after the first.
    expect(turns).toBeGreaterThanOrEqual(4);
  });
});
