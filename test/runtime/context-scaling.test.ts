/**
 * A step costs the same at step 300 as at step 10, shown by counting: the context builder reads
 * each past call once over a whole run (not once per step), keeps every context within
 * `contextTokens` by leaving out the run's oldest steps, gives the same messages as a build from
 * scratch, and stores a context report whose size does not grow with the run.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { buildContext, createTranscript } from '../../src/runtime/steps/context-builder.js';
import { storeOf } from '../../src/runtime/internals.js';
import { loadRunMemory, type RunMemory } from '../../src/runtime/drive/run-memory.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';

const STEPS = 300;
const BUDGET = 3_000;

async function longRun(outputChars: number) {
  const { db } = tempFiles();
  const fetch = defineTool({
    name: 'page.fetch',
    description: 'Fetches a page',
    input: z.object({ n: z.number() }),
    effect: 'read',
    risk: 'low',
    execute: ({ n }) => `page ${n}: ${'x'.repeat(outputChars)}`,
  });
  const runtime = openRuntime({
    database: db,
    planner: createScriptedPlanner((request) =>
      request.stepIndex < STEPS
        ? { type: 'tool_calls', calls: [{ tool: 'page.fetch', args: { n: request.stepIndex } }] }
        : { type: 'final', answer: 'read them all' },
    ),
    tools: [fetch],
    contextTokens: BUDGET,
  });
  const run = await runtime.start({ input: 'read every page', options: { maxSteps: STEPS + 1 } });
  expect((await runtime.wait(run.id)).status).toBe('succeeded');
  return { runtime, runId: run.id };
}

/** The run's memory, with every read of the journal and the ledger counted. */
function countedMemory(memory: RunMemory) {
  let reads = 0;
  const count = <K, V>(map: Map<K, V>) =>
    new Proxy(map, {
      get(target, key) {
        if (key === 'get') {
          return (k: K) => {
            reads += 1;
            return target.get(k);
          };
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  return {
    memory: { ...memory, journal: count(memory.journal), ledger: count(memory.ledger) } as RunMemory,
    reads: () => reads,
  };
}

describe('context of a long run', () => {
  it('stays within the budget, leaving out the oldest steps, with reports that do not grow', async () => {
    const { runtime, runId } = await longRun(1_000);
    const steps = await runtime.steps(runId);
    expect(steps).toHaveLength(STEPS + 1);
    for (const step of steps) expect(step.context!.estimatedTokens).toBeLessThanOrEqual(BUDGET);
    const last = steps.at(-1)!.context!;
    expect(last.droppedSteps).toBeGreaterThan(STEPS / 2);
    expect(last.truncatedTotal).toBeGreaterThan(0);
    // Once the budget is reached, the context holds about as many messages at step 300 as at 100.
    expect(Math.abs(last.included - steps[100]!.context!.included)).toBeLessThanOrEqual(4);
    // A stored report names what changed at its step and counts the rest: once the budget is
    // reached, step 290's is the size of step 100's (give or take a digit or two).
    const bytes = steps.map((step) => JSON.stringify(step.context).length);
    const steady = bytes.slice(100);
    expect(Math.max(...steady) - Math.min(...steady)).toBeLessThanOrEqual(8);
    expect(Math.max(...bytes)).toBeLessThan(400);
  });

  it('reads each past call once over the whole run and builds what a build from scratch builds', async () => {
    const { runtime, runId } = await longRun(1_000);
    const stored = await loadRunMemory(storeOf(runtime), runId);
    const { memory, reads } = countedMemory(stored);
    const run = { id: runId, input: 'read every page' };
    const transcript = createTranscript();
    const perStep: number[] = [];
    for (let step = 1; step <= STEPS; step += 1) {
      const before = reads();
      const incremental = buildContext([], run, step, memory, BUDGET, transcript);
      perStep.push(reads() - before);
      if (step % 50 === 0 || step === 1) {
        const scratch = buildContext([], run, step, stored, BUDGET);
        expect(incremental.messages).toEqual(scratch.messages);
        expect(incremental.report.estimatedTokens).toBe(scratch.report.estimatedTokens);
        // The input and the latest step are always there, a step's calls after its assistant message.
        expect(incremental.messages[0]).toEqual({ role: 'user', content: 'read every page' });
        const tail = incremental.messages.slice(-2);
        expect(tail[0]).toMatchObject({ role: 'assistant' });
        expect(tail[1]).toMatchObject({ role: 'tool', toolCallId: `${runId}.s${step - 1}.c0` });
      }
    }
    // Two reads a step (its decision, its one call) whatever the step: flat, not growing.
    expect(Math.max(...perStep)).toBe(2);
    expect(perStep.reduce((a, b) => a + b, 0)).toBe(2 * STEPS);
  });
});
