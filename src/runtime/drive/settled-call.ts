/**
 * A settled call: the one way a ledger row gets its outcome, whoever settles it — the executor
 * (a call ran, or its attempt ended unknown), a human decision (a call refused, or recorded as
 * done), compensation (an undo ran) or a run's end (a call cut off mid-way). The row and the data
 * of the event that says so come out of one function, so the ledger and the log cannot disagree.
 */
import type { ToolCallRow, ToolCallStatus } from '../../store/index.js';
import type { ToolResult } from '../../tools/tool-result.js';
import { compensatedCallOf } from '../model/rows.js';

/** How a call ended: the status it settles in and the result recorded with it. */
export interface CallOutcome {
  status: ToolCallStatus;
  result: ToolResult;
}

/** A call's settled row and its event: a `result` event for a call, a `compensation` event for an undo. */
export interface SettledCall {
  row: ToolCallRow;
  type: 'result' | 'compensation';
  data: Record<string, unknown>;
}

/**
 * `row` with its outcome (the status, the result as JSON, finished now) and the data of its event.
 * `extra` adds to the event, or overrides a field of it (how an unresolved call was resolved, why
 * it ended, the time a cut-off call ran).
 */
export function toSettledCall(row: ToolCallRow, outcome: CallOutcome, extra?: Record<string, unknown>): SettledCall {
  const { status, result } = outcome;
  const settled: ToolCallRow = { ...row, status, result: JSON.stringify(result), finished_at: Date.now() };
  const compensates = compensatedCallOf(row);
  if (compensates !== null) {
    const data = {
      tool_call_id: row.id,
      compensates,
      tool: row.tool,
      status,
      duration_ms: result.durationMs,
      ...(result.failure ? { failure: result.failure } : {}),
      ...extra,
    };
    return { row: settled, type: 'compensation', data };
  }
  const data = {
    tool_call_id: row.id,
    tool: row.tool,
    status,
    ok: result.status === 'ok',
    ...(result.failure ? { failure: result.failure } : {}),
    truncated: result.truncated,
    duration_ms: result.durationMs,
    ...extra,
  };
  return { row: settled, type: 'result', data };
}
