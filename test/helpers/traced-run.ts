/**
 * The run the OpenTelemetry tests trace: step 0 reads (low risk) and sends (unsafe, high risk:
 * an approval), step 1 answers; the planner names its model, as a model's planner does.
 */
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { createWorld } from './world.js';

/** Its planner and tools; `killAfterEffect` makes the send kill the process right after its effect. */
export function tracedRun(
  effects: string,
  options: { killAfterEffect?: boolean } = {},
): Pick<RuntimeOptions, 'planner' | 'tools'> {
  const reader = createWorld(effects, { risk: 'low' });
  const world = createWorld(effects, { risk: 'high', killAfterEffect: options.killAfterEffect ?? false });
  const planner = createScriptedPlanner((request) =>
    request.stepIndex === 0
      ? {
          type: 'tool_calls',
          calls: [
            { tool: 'world.read', args: { value: 'look' } },
            { tool: 'world.unsafe', args: { value: 'send' } },
          ],
        }
      : { type: 'final', answer: 'sent' },
  );
  return { planner: { ...planner, model: 'scripted-model' }, tools: [reader.read, world.unsafe] };
}
