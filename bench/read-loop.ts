/** The live traffic several bench sections share: runs of `steps` small `page.read` calls, then an answer. */
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type Runtime, type RuntimeOptions } from '../src/index.js';

/** A planner and its one tool: `steps` reads, then the final answer. */
export function readLoop(steps: number): Pick<RuntimeOptions, 'planner' | 'tools'> {
  const page = defineTool({
    name: 'page.read',
    description: 'Reads a page',
    input: z.object({ n: z.number() }),
    effect: 'read',
    risk: 'low',
    execute: ({ n }) => ({ n, text: 'a page of text' }),
  });
  const planner = createScriptedPlanner((r) =>
    r.stepIndex < steps
      ? { type: 'tool_calls', calls: [{ tool: 'page.read', args: { n: r.stepIndex } }] }
      : { type: 'final', answer: 'ok' },
  );
  return { planner, tools: [page] };
}

/** Runs per second of a runtime in one window of `ms`: 10 runs in flight, each started as the last ends. */
export async function loopWindow(runtime: Runtime, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let runs = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (performance.now() < until) {
        await runtime.wait((await runtime.start({ input: 'loop' })).id);
        runs += 1;
      }
    }),
  );
  return runs / (ms / 1_000);
}
