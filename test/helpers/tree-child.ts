/**
 * A Baton process for the child-run crash test: `start` starts the parent run, `resume` finds it
 * in the file; either way it drives the run to its end, approving the clerk's archive on the
 * parent's id whenever the parent shows it, and prints `{"parent", "status", "answer"}` —
 * unless a failpoint kills it first.
 */
import { createRuntime } from '../../src/index.js';
import { treeOptions } from './tree-agents.js';

const config = JSON.parse(process.argv[2]!) as { database: string; effects: string; phase: 'start' | 'resume' };
const runtime = createRuntime(treeOptions(config.database, config.effects));
await runtime.ready;
const parentId =
  config.phase === 'start'
    ? (await runtime.start({ input: 'tidy up' })).id
    : (await runtime.list({ limit: 100 })).runs.find((run) => run.parent === null)!.id;
for (;;) {
  const run = await runtime.wait(parentId);
  if (run.status !== 'waiting_human') {
    process.stdout.write(`${JSON.stringify({ parent: run.id, status: run.status, answer: run.answer })}\n`);
    break;
  }
  const asking = run.childWait?.asking;
  if (!asking) throw new Error(`The parent waits on nothing a person decides: ${JSON.stringify(run)}`);
  await runtime.approve(parentId, asking.pendingApprovalId, { by: 'alice' });
}
await runtime.close();
