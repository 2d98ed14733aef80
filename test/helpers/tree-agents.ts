/**
 * A parent agent that hands a task to a clerk agent called as a tool (`agentTool`); the clerk's
 * archive tool needs approval and records each effect in a file outside Baton's database, so a
 * test can count them whatever process made them.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import {
  agentTool,
  createScriptedPlanner,
  defineAgent,
  defineTool,
  type PlannerRequest,
  type Planner,
} from '../../src/index.js';

/** The last tool observation the planner was shown. */
export function lastObservation(request: PlannerRequest): string {
  return request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';
}

/**
 * The clerk: it archives the file its task names (an unsafe effect a person approves), then says
 * so. Each effect is a line of the `effects` file (`<file> <idempotency key>`), or an entry of the list.
 */
export function clerkAgent(effects: string | string[]) {
  const archive = defineTool({
    name: 'files.archive',
    description: 'Archives a file',
    input: z.object({ file: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ file }, ctx) => {
      if (Array.isArray(effects)) effects.push(file);
      else appendFileSync(effects, `${file} ${ctx.idempotencyKey}\n`);
      return { archived: file };
    },
  });
  return defineAgent({
    name: 'clerk',
    instructions: 'You archive files.',
    tools: [archive],
    planner: createScriptedPlanner([
      (request) => ({
        type: 'tool_calls',
        calls: [{ tool: 'files.archive', args: { file: request.input.replace('archive ', '') } }],
      }),
      (request) => ({ type: 'final', answer: `clerk: ${lastObservation(request)}` }),
    ]),
  });
}

/** The parent's planner: it hands `task` to the clerk, then answers with what the clerk said. */
export function parentPlanner(task = 'archive a.json'): Planner {
  return createScriptedPlanner([
    { type: 'tool_calls', calls: [{ tool: 'agent.clerk', args: { input: task } }] },
    (request) => ({ type: 'final', answer: `parent: ${lastObservation(request)}` }),
  ]);
}

/** The parent's runtime options on `database`, with the clerk as its one tool. */
export function treeOptions(database: string, effects: string) {
  return { database, planner: parentPlanner(), tools: [agentTool(clerkAgent(effects))] };
}
