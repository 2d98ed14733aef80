/** The plan of the multi-worker tests' runs: `steps` steps of a read and an idempotent call, then an answer. */
import { createScriptedPlanner } from '../../src/index.js';

/** The scripted planner every worker of a test shares. */
export function workerPlanner(steps: number) {
  return createScriptedPlanner((request) =>
    request.stepIndex < steps
      ? {
          type: 'tool_calls',
          calls: [
            { tool: 'world.read', args: { value: `look ${request.stepIndex}` } },
            { tool: 'world.idempotent', args: { value: `write ${request.stepIndex}` } },
          ],
        }
      : { type: 'final', answer: `done: ${request.input}` },
  );
}
