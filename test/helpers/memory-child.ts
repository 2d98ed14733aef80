/**
 * A Baton process for the memory crash test. `start`: remembers plan v1, starts `deploy the
 * plan` (it reads v1 and waits for approval), remembers plan v2 meanwhile, then approves — and a
 * failpoint kills it. `resume`: finds the deploy run in the file, drives it to its end and prints
 * `{"run", "status", "answer"}`.
 */
import { createRuntime } from '../../src/index.js';
import { memoryOptions } from './memory-agents.js';

const config = JSON.parse(process.argv[2]!) as { database: string; effects: string; phase: 'start' | 'resume' };
const runtime = createRuntime(memoryOptions(config.database, config.effects));
await runtime.ready;
if (config.phase === 'start') {
  await runtime.wait((await runtime.start({ input: 'set v1', sessionId: 'ops' })).id);
  const run = await runtime.start({ input: 'deploy the plan', sessionId: 'desk' });
  const waiting = await runtime.wait(run.id);
  await runtime.wait((await runtime.start({ input: 'set v2', sessionId: 'ops' })).id);
  await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'alice' });
  await runtime.wait(run.id);
  throw new Error('The failpoint did not kill this process');
}
const { runs } = await runtime.list({ limit: 10 });
const run = await runtime.wait(runs.find((r) => r.input === 'deploy the plan')!.id);
process.stdout.write(`${JSON.stringify({ run: run.id, status: run.status, answer: run.answer })}\n`);
await runtime.close();
