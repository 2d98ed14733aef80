/**
 * An agent with tenant memory for the memory crash test: `set <plan>` remembers the tenant's
 * plan; `deploy the plan` reads it, notes the read in the session's memory and deploys it (a
 * deploy needs approval, so the step waits before any of its calls run), then answers with what
 * it read and what the memory says now. Each deploy is a line of the `effects` file.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { createScriptedPlanner, defineTool, memoryTools, type RuntimeOptions } from '../../src/index.js';

export function memoryOptions(database: string, effects: string): RuntimeOptions {
  const deploy = defineTool({
    name: 'ops.deploy',
    description: 'Deploys a plan',
    input: z.object({ plan: z.string() }),
    effect: 'idempotent',
    risk: 'high',
    execute: ({ plan }, ctx) => {
      appendFileSync(effects, `${plan} ${ctx.idempotencyKey}\n`);
      return { deployed: plan };
    },
  });
  return {
    database,
    tools: [...memoryTools(), deploy],
    planner: createScriptedPlanner((request) => {
      const set = /^set (.+)$/.exec(request.input);
      if (set) {
        return request.stepIndex === 0
          ? {
              type: 'tool_calls',
              calls: [{ tool: 'memory.write', args: { scope: 'tenant', key: 'plan', value: set[1] } }],
            }
          : { type: 'final', answer: 'set' };
      }
      if (request.stepIndex === 0) {
        return {
          type: 'tool_calls',
          calls: [
            { tool: 'memory.read', args: { scope: 'tenant', key: 'plan' } },
            { tool: 'memory.write', args: { key: 'deployed', value: request.memory?.tenant?.plan ?? null } },
            { tool: 'ops.deploy', args: { plan: String(request.memory?.tenant?.plan) } },
          ],
        };
      }
      const read = request.messages.find((m) => m.role === 'tool')?.content ?? 'null';
      return {
        type: 'final',
        answer: JSON.stringify({ read: JSON.parse(read) as unknown, now: request.memory?.tenant?.plan }),
      };
    }),
  };
}
