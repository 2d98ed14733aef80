/**
 * A Baton process for the handoff crash test: `start` starts triage's run, `resume` finds it in
 * the file; either way it drives the run to its end, approving billing's refund whenever the run
 * waits for it, and prints `{"run", "status", "answer"}` — unless a failpoint kills it first.
 */
import { createRuntime } from '../../src/index.js';
import { handoffOptions } from './handoff-agents.js';

const config = JSON.parse(process.argv[2]!) as { database: string; effects: string; phase: 'start' | 'resume' };
const runtime = createRuntime(handoffOptions(config.database, config.effects));
await runtime.ready;
const runId =
  config.phase === 'start'
    ? (await runtime.start({ input: 'refund A1' })).id
    : (await runtime.list({ limit: 10 })).runs[0]!.id;
for (;;) {
  const run = await runtime.wait(runId);
  if (run.status !== 'waiting_human') {
    process.stdout.write(`${JSON.stringify({ run: run.id, status: run.status, answer: run.answer })}\n`);
    break;
  }
  if (run.waitReason !== 'approval') throw new Error(`The run waits on something else: ${JSON.stringify(run)}`);
  await runtime.approve(runId, run.pendingApprovalId!, { by: 'alice' });
}
await runtime.close();
