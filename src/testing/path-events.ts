/**
 * How `runPath` makes the runtime take one event of the model: a person's call on the public
 * API (cancel, approve, reject, edit, respond, answer, extend, end), letting the held actor go
 * (and, for an uncertain side effect, a crash inside the unsafe call), or waiting for what the
 * runtime does by itself at a stored instant (a deadline, an expiry). An operator's pause leaves
 * the actor held: the path's next event takes it.
 */
import type { RunEvent } from '../../machines/types.js';
import type { Budget } from '../runtime/model/types.js';
import type { Runtime } from '../runtime/runtime.js';
import type { GateHit } from './gates.js';
import { PathMismatchError, poll, SETTLE_MS, takeActor } from './path-checks.js';
import { MODEL_EXPIRES_MS, MODEL_EXTENSION_MS } from './path-scenario.js';
import type { PathSession } from './path-session.js';
import type { RunPath } from './run-model.js';

/**
 * Makes the run take the step's event; `hit` is the actor held at its gate, if any. Resolves with
 * the actor still held for the next event (one the event did not stop), if any.
 */
export async function applyPathEvent(
  session: PathSession,
  runId: string,
  step: RunPath['steps'][number],
  hit: GateHit | undefined,
  where: string,
): Promise<GateHit | undefined> {
  const { event } = step;
  const runtime = session.runtime;
  const by = 'by' in event && event.by ? event.by : 'model';
  const waiting = () => runtime.get(runId);
  const n = step.before.context.stepIndex;
  switch (event.type) {
    case 'cancel':
      await runtime.cancel(runId, event.compensate ? { compensate: true } : {});
      break;
    case 'pause': {
      const asked = await runtime.pause(runId, { reason: event.reason ?? 'model pause', by });
      if (!asked.pauseRequested) throw new PathMismatchError(`${where}: the run shows no pause asked`);
      // Nothing stops: the actor in flight goes on when the path's next event lets it.
      return hit;
    }
    case 'resumed':
      await runtime.resume(runId, { by });
      break;
    case 'timeout':
      break; // The persisted deadline fires while the actor is held (or while the run waits).
    case 'approved': {
      // An uncertain side effect is run again; an ordinary approval takes no resolution.
      const run = await waiting();
      await runtime.approve(runId, run.pendingApprovalId!, {
        by,
        ...(run.waitReason === 'uncertain_side_effect' ? { resolution: 'retry' as const } : {}),
      });
      break;
    }
    case 'rejected': {
      const run = await waiting();
      if (run.waitReason === 'budget') {
        // A budget wait is not rejected but ended: the run fails as the budget says.
        await runtime.decide(runId, run.pendingApprovalId!, { decision: 'end', by });
        break;
      }
      await runtime.reject(runId, run.pendingApprovalId!, {
        by,
        terminate: event.terminate,
        ...(event.compensate ? { compensate: true } : {}),
      });
      break;
    }
    case 'edited':
      await runtime.decide(runId, (await waiting()).pendingApprovalId!, {
        decision: 'edit',
        by,
        args: { n: 1000 + n },
      });
      break;
    case 'responded':
      await runtime.decide(runId, (await waiting()).pendingApprovalId!, {
        decision: 'respond',
        by,
        output: { n: -1 - n },
      });
      break;
    case 'answered':
      await runtime.answer(runId, (await waiting()).pendingApprovalId!, { answer: `the answer for step ${n}`, by });
      break;
    case 'extended': {
      const approvalId = (await waiting()).pendingApprovalId!;
      const limits = await extensionOf(runtime, runId, approvalId, where);
      await runtime.decide(runId, approvalId, { decision: 'extend', by, limits });
      break;
    }
    case 'expired':
      await expiry(runtime, runId, event, where);
      break;
    case 'child_ended': {
      // The child run answers; its end reaches the parent by itself.
      const child = (await waiting()).childWait;
      if (!child) throw new PathMismatchError(`${where}: the run waits on no child`);
      session.scenario.endChild(child.runId);
      break;
    }
    case 'task_ended': {
      // The work ends; the run's next poll finds it so by itself.
      const waiting = (await runtime.toolCalls(runId)).find((c) => c.status === 'waiting' && c.handle != null);
      if (!waiting) throw new PathMismatchError(`${where}: the run waits on no task`);
      session.scenario.endTask(waiting.id);
      break;
    }
    case 'need_approval':
      hit!.release();
      if (event.reason === 'uncertain_side_effect') {
        // A crash inside the unsafe call: only a restart makes its outcome uncertain.
        await session.scenario.fragileStarted;
        await session.restart();
        (await takeActor(session.gates, step, `${where} after the crash`)).release();
      }
      break;
    default:
      hit!.release();
  }
}

const LIMIT_KEYS: Record<string, keyof Budget | 'maxSteps'> = {
  max_steps: 'maxSteps',
  max_llm_calls: 'maxLlmCalls',
  max_tool_calls: 'maxToolCalls',
  max_tokens: 'maxTokens',
  max_cost_usd: 'maxCostUsd',
};

/** A person's extension of a budget wait: exactly the budget that ran out, one past its use (or more time). */
async function extensionOf(
  runtime: Runtime,
  runId: string,
  approvalId: string,
  where: string,
): Promise<Budget & { maxSteps?: number }> {
  const request = (await runtime.approvals(runId)).find((a) => a.id === approvalId)?.request;
  if (request?.kind !== 'budget') throw new PathMismatchError(`${where}: '${approvalId}' is not a budget wait`);
  if (request.budget === 'timeout') return { timeoutMs: MODEL_EXTENSION_MS };
  const key = LIMIT_KEYS[request.budget];
  const used = request.limits.find((limit) => limit.budget === request.budget)?.used;
  if (!key || used === undefined) throw new PathMismatchError(`${where}: the wait names no budget it can raise`);
  return { [key]: used + 1 };
}

/**
 * Waits for the runtime to apply the expiry of the pending wait (it loads the run when the
 * stored instant passes), after checking that the wait carries the terms the model expires it with.
 */
async function expiry(
  runtime: Runtime,
  runId: string,
  event: Extract<RunEvent, { type: 'expired' }>,
  where: string,
): Promise<void> {
  const approvalId = (await runtime.get(runId)).pendingApprovalId!;
  const wait = (await runtime.approvals(runId)).find((a) => a.id === approvalId);
  if (wait?.expiresAt == null || wait.onExpire?.outcome !== event.outcome) {
    throw new PathMismatchError(
      `${where}: '${approvalId}' should expire with '${event.outcome}', it has ${JSON.stringify(wait?.onExpire ?? null)}`,
    );
  }
  await poll(
    async () => (await runtime.approvals(runId)).find((a) => a.id === approvalId)?.status,
    (status) => status === 'expired',
    (status) => `${where}: '${approvalId}' is still ${status} past its expiry`,
    MODEL_EXPIRES_MS + SETTLE_MS,
  );
}
