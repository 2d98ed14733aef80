/**
 * A call whose work goes on elsewhere (an MCP task): once its tool saved the work's handle and let
 * go of the call (`ctx.detach`), the call's row becomes `waiting` (keeping the handle) and the run
 * waits for the work to end (reason `task`), holding no actor and no memory. The wait's
 * `expires_at` is when it is polled next; whichever runtime loads the run then polls it
 * (`steps/task-wait.ts`).
 */
import { DEFAULTS } from '../../defaults.js';
import { createFailure } from '../../failure.js';
import type { ApprovalRow } from '../../store/index.js';
import type { ToolRun } from '../../tools/run-tool.js';
import { toErrorResult } from '../../tools/tool-result.js';
import { callRow, pendingApproval } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { taskWaitId } from '../model/ids.js';
import type { CallScope } from './call-scope.js';

/** What a task wait remembers between two polls: the last status told, and the polls in a row that found no one. */
export interface TaskPollState {
  told: string | null;
  misses: number;
}

/** When the next poll is due: after the interval the tool asked for (bounded), or, with `misses` unanswered polls, later each time. */
export function nextPollAt(now: number, pollAfterMs: number | undefined, misses = 0): number {
  if (misses > 0) return now + Math.min(DEFAULTS.taskPollMaxMs, DEFAULTS.taskPollMs * 2 ** (misses - 1));
  const asked = pollAfterMs ?? DEFAULTS.taskPollMs;
  return now + Math.min(DEFAULTS.taskPollMaxMs, Math.max(DEFAULTS.taskPollMinMs, asked));
}

/** The wait of a call whose work goes on elsewhere, staged with its row; its id. */
export function waitOnTask(
  scope: CallScope,
  call: PreparedCall,
  pollAfterMs: number | undefined,
  told: string | null,
): string {
  const { live, runId, stepIndex } = scope;
  const { driver } = live;
  const row = callRow(runId, stepIndex, call, { status: 'waiting' });
  call.row = row;
  driver.stageToolCall(row);
  const waitId = taskWaitId(call.id, row.attempts);
  const handle = JSON.parse(row.handle!) as unknown;
  const pollAt = nextPollAt(Date.now(), pollAfterMs);
  const state: TaskPollState = { told, misses: 0 };
  driver.stageApproval({
    ...pendingApproval(waitId, runId, stepIndex, 'task', [call], {
      request: { kind: 'task', tool: call.toolName, handle },
      role: 'none',
    }),
    expires_at: pollAt,
    expiry: JSON.stringify(state),
  });
  driver.emit('task', {
    tool_call_id: call.id,
    tool: call.toolName,
    handle,
    status: 'waiting',
    poll_at: pollAt,
  });
  return waitId;
}

/** The pending task wait of a call waiting on its work elsewhere, if it has one. */
export function pendingTaskWait(approvals: ReadonlyMap<string, ApprovalRow>, call: PreparedCall): string | null {
  if (call.row?.status !== 'waiting' || call.row.handle === null) return null;
  const wait = approvals.get(taskWaitId(call.id, call.row.attempts));
  return wait?.status === 'pending' ? wait.id : null;
}

/**
 * A call its tool let go of (`ctx.detach`): with its handle durable, the run waits for its work
 * (the wait's id); with none, what it started cannot be found again, and the outcome becomes an
 * unknown one (null).
 */
export function detach(scope: CallScope, call: PreparedCall, outcome: ToolRun, told: string | null): string | null {
  if (call.row?.handle) return waitOnTask(scope, call, outcome.detached?.pollAfterMs, told);
  const failure = createFailure(
    'tool.outcome_unknown',
    `The outcome of tool '${call.toolName}' is unknown: it let go of the call without saving a handle`,
  );
  outcome.result = toErrorResult(failure, outcome.result.durationMs);
  outcome.unknown = 'threw';
  delete outcome.detached;
  return null;
}
