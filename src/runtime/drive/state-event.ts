/** The data of a run's `state` event: the move, and what the run's context says of it. */
import type { RunContext, RunStatus } from '../../../machines/types.js';
import { toCompensationData, toRunCompensation } from '../model/event-data.js';
import type { CutOffCalls } from './cut-off-calls.js';
import { TERMINAL } from './snapshot-saver.js';

/** The data of the `state` event of a move from `from` to `to`, with the run's context after it. */
export function stateEventData(
  from: RunStatus,
  to: RunStatus,
  ctx: RunContext,
  cutOff: Pick<CutOffCalls, 'unknown' | 'withUnknown'>,
): Record<string, unknown> {
  return {
    from,
    to,
    step_index: ctx.stepIndex,
    ...(ctx.stopReason ? { stop_reason: ctx.stopReason } : {}),
    ...(ctx.failure ? { failure: cutOff.withUnknown(ctx.failure) } : {}),
    ...(ctx.waitReason ? { wait_reason: ctx.waitReason, approval_id: ctx.pendingApprovalId } : {}),
    ...(cutOff.unknown.length > 0 ? { unknown_tool_calls: cutOff.unknown } : {}),
    ...(TERMINAL.has(to) && ctx.compensation
      ? { compensation: toCompensationData(toRunCompensation(ctx.compensation, true)) }
      : {}),
  };
}
