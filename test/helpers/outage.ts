/**
 * An agent for reruns after an incident: step 0 looks a note up (a read), step 1 answers — or,
 * while the model is "down" (the outage switch is on), fails with `planner.unavailable`, as a
 * model API's outage would. Counts every planner call and lookup by run.
 */
import { z } from 'zod';
import { BatonError, createFailure } from '../../src/failure.js';
import { createScriptedPlanner, defineTool } from '../../src/index.js';

/** The outage switch and what was asked. */
export interface Outage {
  down: boolean;
  planned: { runId: string; step: number }[];
  lookups: string[];
}

/** The agent's planner and tools, switched by `outage.down` (or, in a child, by `isDown()`). */
export function outageAgent(outage: Outage, isDown: () => boolean = () => outage.down) {
  const lookup = defineTool({
    name: 'notes.lookup',
    description: 'Look a note up',
    input: z.object({ key: z.string() }),
    effect: 'read',
    risk: 'low',
    execute: ({ key }, ctx) => {
      outage.lookups.push(ctx.runId);
      return { key, note: `note ${key}` };
    },
  });
  const planner = createScriptedPlanner((request) => {
    outage.planned.push({ runId: request.runId, step: request.stepIndex });
    if (request.stepIndex === 0) return { type: 'tool_calls', calls: [{ tool: 'notes.lookup', args: { key: 'k' } }] };
    if (isDown()) throw new BatonError(createFailure('planner.unavailable', 'The model API is down (503)'));
    return { type: 'final', answer: `answered: ${request.input}` };
  });
  return { planner, tools: [lookup] };
}
