/** A read tool whose output (~40 KB) is too large for the context: Baton stores it as an artifact. */
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';

export const reportTool = defineTool({
  name: 'report.fetch',
  description: 'Fetches a long report',
  input: z.object({ name: z.string() }),
  effect: 'read',
  risk: 'low',
  execute: ({ name }) => ({ name, lines: Array.from({ length: 2_000 }, (_, i) => `line ${i} of ${name}`) }),
});

/** A planner that fetches the report named by the run's input, then answers. */
export function reportPlanner() {
  return createScriptedPlanner((r) =>
    r.stepIndex === 0
      ? { type: 'tool_calls', calls: [{ tool: 'report.fetch', args: { name: r.input } }] }
      : { type: 'final', answer: 'read it' },
  );
}
