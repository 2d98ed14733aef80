/**
 * A script that starts a run whose call lets go while its work goes on elsewhere, and then does
 * nothing: the runtime, which polls that work, keeps the process alive until the run has ended.
 * Each poll and the final answer are appended to the file named in argv[3].
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { createRuntime, createScriptedPlanner, defineTool } from '../../src/index.js';

const [database, log] = [process.argv[2]!, process.argv[3]!];
let polls = 0;
const job = defineTool({
  name: 'job.run',
  description: 'Runs a job elsewhere',
  input: z.object({}),
  effect: 'idempotent',
  risk: 'low',
  execute: async (_input, ctx) => {
    await ctx.saveHandle?.({ job: 'nightly' });
    return ctx.detach!({ pollAfterMs: 200 });
  },
  pollHandle: async () => {
    appendFileSync(log, `poll ${++polls}\n`);
    return polls < 2 ? { done: false, pollAfterMs: 200 } : { done: true, output: 'finished' };
  },
});
const runtime = createRuntime({
  database,
  tools: [job],
  planner: createScriptedPlanner([
    { type: 'tool_calls', calls: [{ tool: 'job.run', args: {} }] },
    () => {
      appendFileSync(log, 'answered\n');
      return { type: 'final', answer: 'done' };
    },
  ]),
});
await runtime.start({ input: 'run the job, then idle' });
