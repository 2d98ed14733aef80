/** The live traffic several bench sections share: runs of `steps` small `page.read` calls, then an answer. */
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type RuntimeOptions } from '../src/index.js';

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
