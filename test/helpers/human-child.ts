/**
 * A Baton process for the human-wait crash tests, one phase each (`HumanChildConfig`), printing
 * what it sees as JSON lines: `start` starts a run of its kind and lets it reach its wait
 * (`started`, then `settled`), then idles until it is killed; `decide` takes one decision from
 * a fresh process (`decided` or `decide_error`; a failpoint may kill it right after the commit)
 * and drives the run to its end (`ended`); `resume` only drives the run to its end (`ended`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync } from 'node:fs';
import { BatonError, createRuntime, type Run } from '../../src/index.js';
import { decisionOf, humanSetup, startOptionsOf, type HumanChildConfig } from './human-waits.js';
import { scaled } from './limits.js';

const config = JSON.parse(process.argv[2]!) as HumanChildConfig;
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const runtime = createRuntime({
  ...humanSetup(config.kind, config.database, config.effects),
  ...(config.leaseMs ? { leaseMs: config.leaseMs } : {}),
  ...(config.claimEveryMs ? { claimEveryMs: config.claimEveryMs } : {}),
});
await runtime.ready;
say({ type: 'ready', pid: process.pid, owner: runtime.owner });

const view = (run: Run) => ({
  run_id: run.id,
  status: run.status,
  stop_reason: run.stopReason,
  wait_reason: run.waitReason,
  pending_approval_id: run.pendingApprovalId,
  answer: run.answer,
});

/** The run once it is terminal (a waiting run is waited on again: the decision may not be applied yet). */
async function ended(runId: string): Promise<Run> {
  const deadline = Date.now() + scaled(60_000);
  for (;;) {
    const run = await runtime.wait(runId);
    if (run.status === 'succeeded' || run.status === 'failed') return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status}`);
    await sleep(25);
  }
}

if (config.phase === 'start') {
  const run = await runtime.start({
    input: `a ${config.kind} wait`,
    options: { ...startOptionsOf(config.kind), ...config.options },
  });
  say({ type: 'started', run_id: run.id });
  say({ type: 'settled', ...view(await runtime.wait(run.id)) });
  // Left open (a process that still has the file) until the parent kills it.
  setInterval(() => undefined, 1 << 30);
} else {
  const runId = config.runId!;
  if (config.phase === 'decide') {
    const goFile = config.goFile;
    if (goFile) {
      say({ type: 'armed' });
      const deadline = Date.now() + scaled(60_000);
      while (!existsSync(goFile) && Date.now() < deadline) await sleep(5);
    }
    try {
      const decided = await runtime.decide(runId, config.approvalId!, config.decision ?? decisionOf(config.kind));
      say({ type: 'decided', status: decided.status, resolution: decided.resolution, by: decided.decidedBy });
    } catch (error) {
      const code = error instanceof BatonError ? error.code : 'not a BatonError';
      say({ type: 'decide_error', code, message: error instanceof Error ? error.message : String(error) });
    }
  }
  say({ type: 'ended', ...view(await ended(runId)) });
  await runtime.close();
}
