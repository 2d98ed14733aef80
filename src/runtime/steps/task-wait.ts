/**
 * A run's wait on the work its call left running elsewhere (an MCP task), polled when it is due
 * (the wait's `expires_at`) by whichever runtime loads the run: one poll with the tool's
 * `pollHandle`, then, in the run's own write unit and with the same compare-and-set on the wait
 * as a person's decision, either the next poll is set (and a new status told as a `progress`
 * event), or the wait is decided by the work's end and the call settled with its outcome (the
 * output, the failure the model is told, or an unknown outcome resolved by the call's effect
 * class, the handle dropped), a `task` event written; the run then takes `task_ended`. Past the
 * call's deadline the work is cancelled (best effort) and the call's outcome is unknown.
 */
import { DEFAULTS } from '../../defaults.js';
import { createFailure } from '../../failure.js';
import { pollTool, type PollRun } from '../../tools/run-tool.js';
import { toErrorResult } from '../../tools/tool-result.js';
import type { ApprovalRow, ToolCallRow } from '../../store/index.js';
import { stepAgentOf, type LiveRun, type RuntimeEnv } from '../drive/env.js';
import { wakeAtOf } from '../drive/wake-at.js';
import { failpoint } from '../model/failpoints.js';
import { storeArtifact } from './execute-call.js';
import { nextPollAt, type TaskPollState } from './task-call.js';
import { resumeAfterDecision, waitsOn } from '../ledger/approvals.js';
import { settleCall, stepCalls } from '../ledger/ledger.js';
import { decideByRuntime } from '../ledger/question-rows.js';
import { toProgressData } from '../model/event-data.js';

/** Who a task wait is recorded as decided by. */
export const TASK_DECIDER = 'baton:task';

/** The call a task wait is on, and its row. */
function waitingCall(live: LiveRun, wait: ApprovalRow): ToolCallRow | undefined {
  const [callId] = JSON.parse(wait.tool_call_ids) as string[];
  const row = callId ? live.driver.memory.ledger.get(callId) : undefined;
  return row?.status === 'waiting' && row.handle !== null ? row : undefined;
}

/** Polls the work a run waits on, once, if the wait is due; resolves once what it found is durable. */
export async function checkTask(env: RuntimeEnv, live: LiveRun, waitId: string): Promise<void> {
  const { driver } = live;
  const wait = driver.memory.approvals.get(waitId);
  if (!wait || wait.kind !== 'task' || wait.status !== 'pending' || live.polling) return;
  if (!waitsOn(driver.actor.getSnapshot(), waitId)) return;
  const row = waitingCall(live, wait);
  if (!row) return;
  const tool = stepAgentOf(env, live, wait.step_index).tools.get(row.tool);
  const handle = JSON.parse(row.handle!) as unknown;
  const now = Date.now();
  let found: PollRun;
  live.polling = true;
  try {
    if (row.deadline_at !== null && row.deadline_at <= now) {
      // Past the call's time limit: the work is cancelled, and whether it took effect is unknown.
      if (tool?.cancelHandle) {
        await tool.cancelHandle(handle, { runId: driver.runId, toolCallId: row.id }).catch(() => undefined);
      }
      const failure = createFailure(
        'tool.timed_out',
        `Tool '${row.tool}' timed out after ${row.deadline_at - (row.started_at ?? row.deadline_at)} ms while its work went on elsewhere`,
        { retryable: true },
      );
      found = { running: false, result: toErrorResult(failure), unknown: 'timed_out' };
    } else if (!tool) {
      const failure = createFailure(
        'tool.outcome_unknown',
        `The outcome of tool '${row.tool}' is unknown: this runtime does not have the tool, and cannot follow its work`,
      );
      found = { running: false, result: toErrorResult(failure), unknown: 'threw' };
    } else {
      const context = {
        runId: driver.runId,
        toolCallId: row.id,
        signal: new AbortController().signal,
        context: live.context,
      };
      found = await pollTool(tool, handle, context, DEFAULTS.taskPollTimeoutMs);
    }
  } finally {
    live.polling = false;
  }
  // A `read` call has no effect to be unsure of: its work's failure is told to the model, which
  // may call it again (run again as an unknown outcome, it would fail the same way forever).
  if (!found.running && found.unknown && tool?.effect === 'read') delete found.unknown;
  failpoint(found.running ? 'task.polled' : 'task.ended');
  // The call took from its start to this poll, not just the poll.
  if (!found.running && row.started_at !== null) found.result.durationMs = Math.max(0, now - row.started_at);
  if (!found.running && tool) storeArtifact({ env, live }, found);
  let decided: ApprovalRow | undefined;
  driver.stage((writer) => {
    const current = driver.memory.approvals.get(waitId);
    if (!current || current.status !== 'pending' || !waitsOn(driver.actor.getSnapshot(), waitId)) return;
    const state = JSON.parse(current.expiry ?? '{}') as Partial<TaskPollState>;
    if (found.running) {
      const message = found.progress?.message;
      const tells = typeof message === 'string' && message !== state.told;
      const next: TaskPollState = {
        told: tells ? message : (state.told ?? null),
        misses: found.unreachable ? (state.misses ?? 0) + 1 : 0,
      };
      const at = nextPollAt(Date.now(), found.pollAfterMs, next.misses);
      const polled = { ...current, expires_at: at, expiry: JSON.stringify(next) };
      writer.escalateApproval(waitId, { role: current.role, expires_at: at, expiry: polled.expiry });
      driver.memory.approvals.set(waitId, polled);
      writer.setWakeAt(driver.runId, wakeAtOf(driver.context(), driver.memory.approvals));
      if (tells || (found.progress && typeof found.progress.progress === 'number')) {
        driver.writeEvent('progress', toProgressData(row.id, row.tool, found.progress ?? {}));
      }
      return;
    }
    const status = found.unknown ? 'unknown' : found.result.status === 'ok' ? 'succeeded' : 'failed';
    decided = decideByRuntime(writer, live, current, {
      status: status === 'succeeded' ? 'approved' : 'rejected',
      by: TASK_DECIDER,
      reason: status === 'succeeded' ? null : (found.result.failure?.message ?? null),
      at: Date.now(),
      answer: JSON.stringify({ status }),
    });
    driver.writeEvent('task', {
      tool_call_id: row.id,
      tool: row.tool,
      handle,
      status,
      ...(found.result.failure ? { failure: found.result.failure } : {}),
    });
    const call = stepCalls(env, live, driver.runId, current.step_index).find((c) => c.id === row.id);
    if (!call) return;
    if (found.unknown) {
      // The work is gone (or its outcome cannot be known): the handle is dropped, so a retry
      // (a person's, or an idempotent tool's) starts it anew rather than following it again.
      call.row = { ...row, handle: null };
      settleCall(driver, current.step_index, call, 'unknown', found.result, {
        mode: 'write',
        extra: { cause: found.unknown },
      });
      return;
    }
    settleCall(driver, current.step_index, call, status as 'succeeded' | 'failed', found.result, { mode: 'write' });
  });
  await driver.flush();
  if (!decided) return;
  resumeAfterDecision(live, decided);
  await driver.flush().catch(() => undefined);
}
