/**
 * The human in crash tests: an operator who answers every approval, and who settles an
 * uncertain side effect by checking the outside world (the effects file) — recorded as done
 * if the effect happened, retried if it did not.
 */
import type { Approval, Run, Runtime } from '../../src/index.js';
import { readEffects } from './world.js';
import { scaled } from './limits.js';

/** What the operator did about one wait. */
export type OperatorAction = 'approved' | 'done' | 'retry';

/** The decision an operator takes on a pending approval, given the effects file. */
export function operatorDecision(approval: Approval, effectsFile: string): OperatorAction {
  if (approval.kind !== 'uncertain') return 'approved';
  const keys = new Set(readEffects(effectsFile).map((e) => e.key));
  return approval.toolCallIds.every((id) => keys.has(id)) ? 'done' : 'retry';
}

/** The pending approval a waiting run is blocked on, if the run says so and the approval exists. */
export async function pendingApproval(runtime: Runtime, run: Run): Promise<Approval | undefined> {
  return (await runtime.approvals(run.id)).find((a) => a.id === run.pendingApprovalId && a.status === 'pending');
}

/** `runtime.wait`, but a run that never settles fails with a message instead of hanging. */
export async function waitAtMost(runtime: Runtime, runId: string, ms: number): Promise<Run> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Run '${runId}' did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([runtime.wait(runId), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Drives a run until it is terminal, deciding every wait as the operator would; bounded in rounds and time. */
export async function drainRun(
  runtime: Runtime,
  runId: string,
  effectsFile: string,
  limits: { rounds?: number; waitMs?: number } = {},
): Promise<{ run: Run; actions: OperatorAction[] }> {
  const actions: OperatorAction[] = [];
  let run = await waitAtMost(runtime, runId, limits.waitMs ?? scaled(10_000));
  for (let round = 0; round < (limits.rounds ?? 20) && run.status === 'waiting_human'; round += 1) {
    const approval = await pendingApproval(runtime, run);
    if (!approval) break;
    const action = operatorDecision(approval, effectsFile);
    await runtime.approve(runId, approval.id, {
      by: 'ops',
      ...(action === 'approved' ? {} : { resolution: action }),
    });
    actions.push(action);
    run = await waitAtMost(runtime, runId, limits.waitMs ?? scaled(10_000));
  }
  return { run, actions };
}
