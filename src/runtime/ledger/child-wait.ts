/**
 * A parent's wait on the child run its call started (an agent called as a tool), settled when
 * the child has ended: in the parent's own write unit, with the same compare-and-set on the wait
 * as a person's decision, the wait is decided by the child's end, the call settled with the
 * child's answer (or its failure, which the model is told), and a `child` event written; the
 * parent then takes `child_ended`, which adds the child's usage to its own. Of two runtimes that
 * both see the child end, one settles it.
 */
import { createFailure, type Failure } from '../../failure.js';
import type { ApprovalRow, RunRow } from '../../store/index.js';
import { toErrorResult, type ToolResult } from '../../tools/tool-result.js';
import type { LiveRun, RuntimeEnv } from '../drive/env.js';
import { resumeAfterDecision, waitsOn } from './approvals.js';
import { settleCall, stepCalls } from './ledger.js';
import { decideByRuntime } from './question-rows.js';

/** Who a child wait is recorded as decided by. */
export const CHILD_DECIDER = 'baton:child';

/** What a child wait's decision stores: the child, how it ended, and what it used. */
export interface ChildOutcome {
  child_run_id: string;
  status: string;
  usage: { llm_calls: number; tool_calls: number; tokens: number; cost_usd: number };
}

/** The result a call of an agent tool gets from its ended child: the answer, or why there is none. */
export function childResult(child: RunRow): { ok: boolean; result: ToolResult; failure: Failure | null } {
  const durationMs = Math.max(0, child.updated_at - child.created_at);
  if (child.status === 'succeeded') {
    return {
      ok: true,
      result: { status: 'ok', content: child.answer ?? '', durationMs, truncated: false, retryable: false },
      failure: null,
    };
  }
  const cause = child.failure ? (JSON.parse(child.failure) as Failure) : null;
  const why = cause ? `: ${cause.message}` : child.stop_reason ? ` (${child.stop_reason})` : '';
  const failure = createFailure('tool.failed', `Agent '${child.agent ?? '?'}' did not finish its task${why}`, {
    details: { child_run_id: child.id, stop_reason: child.stop_reason, failure: cause },
  });
  return { ok: false, result: { ...toErrorResult(failure), durationMs }, failure };
}

/**
 * Settles the parent's wait on its ended child, once; false when there was nothing to settle (the
 * wait was settled already, or the parent does not wait on it now).
 */
export async function settleChildWait(env: RuntimeEnv, live: LiveRun, waitId: string, child: RunRow): Promise<boolean> {
  const { driver } = live;
  let settled: ApprovalRow | undefined;
  driver.stage((writer) => {
    const current = driver.memory.approvals.get(waitId);
    if (!current || current.kind !== 'child' || current.status !== 'pending') return;
    if (!waitsOn(driver.actor.getSnapshot(), waitId)) return;
    const { ok, result, failure } = childResult(child);
    const outcome: ChildOutcome = {
      child_run_id: child.id,
      status: child.status,
      usage: {
        llm_calls: child.llm_calls,
        tool_calls: child.tool_calls,
        tokens: child.tokens,
        cost_usd: child.cost_usd,
      },
    };
    settled = decideByRuntime(writer, live, current, {
      status: ok ? 'approved' : 'rejected',
      by: CHILD_DECIDER,
      reason: failure?.message ?? null,
      at: Date.now(),
      answer: JSON.stringify(outcome),
    });
    const [callId] = JSON.parse(current.tool_call_ids) as string[];
    driver.writeEvent('child', {
      tool_call_id: callId,
      child_run_id: child.id,
      agent: child.agent,
      status: child.status,
      ...(ok ? { answer: child.answer } : { failure }),
      usage: outcome.usage,
    });
    const call = stepCalls(env, live, driver.runId, current.step_index).find((c) => c.id === callId);
    if (call) {
      settleCall(driver, current.step_index, call, ok ? 'succeeded' : 'failed', result, {
        mode: 'write',
        extra: { child_run_id: child.id },
      });
    }
  });
  await driver.flush();
  if (!settled) return false;
  resumeAfterDecision(live, settled);
  await driver.flush().catch(() => undefined);
  return true;
}
