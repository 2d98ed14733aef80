/**
 * The benchmark's Baton: a runtime on its own file with one zod tool and a scripted planner
 * that calls it once per step for `steps` steps, then answers.
 */
import { z } from 'zod';
import {
  createRuntime,
  createScriptedPlanner,
  defineTool,
  type Decision,
  type Effect,
  type Runtime,
  type RuntimeOptions,
} from '../src/index.js';

/** The tool the loop calls. */
export const TOOL_NAME = 'notes.lookup';

/** A tool loop: `steps` decisions with one call each, then a final answer. */
export function toToolLoopScript(steps: number): Decision[] {
  const calls: Decision[] = Array.from({ length: steps }, (_, step) => ({
    type: 'tool_calls',
    calls: [{ tool: TOOL_NAME, args: { key: `note-${step}`, limit: 3 } }],
  }));
  return [...calls, { type: 'final', answer: `Looked up ${steps} notes.` }];
}

/**
 * Creates a runtime whose only tool has the given effect class (risk `low`, so it never waits
 * for approval). With `modelLike`, the planner is not `cheap`: each step's answer is journaled
 * (committed) before it is acted on, as a real model's is (with the call's `started` row, for an
 * `unsafe` tool).
 */
export function createBenchRuntime(options: {
  database: string;
  effect: Effect;
  steps: number;
  modelLike?: boolean;
  /** Other runtime options (a worker's lease and claim settings, say). */
  extra?: Partial<RuntimeOptions>;
}): Runtime {
  const tool = defineTool({
    name: TOOL_NAME,
    description: 'Looks up a note by key',
    input: z.object({ key: z.string().min(1), limit: z.number().int().positive().default(10) }),
    effect: options.effect,
    risk: 'low',
    execute: ({ key, limit }) => ({ key, hits: limit, text: `contents of ${key}` }),
  });
  const scripted = createScriptedPlanner(toToolLoopScript(options.steps));
  const planner = options.modelLike ? { cheap: false, next: scripted.next.bind(scripted) } : scripted;
  return createRuntime({ database: options.database, planner, tools: [tool], ...options.extra });
}
