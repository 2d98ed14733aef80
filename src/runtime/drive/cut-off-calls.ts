/**
 * Calls cut off by a run's end. A run that ends while a call runs (cancelled, timed out) settles
 * that call in the same write as its last transition, so no row stays `started` in a finished
 * run: a `read` call failed, any other `unknown`, since its effect may still happen after the
 * abort. The unknown ones are named in the run's terminal failure and its last `state` event. A
 * call stopped to ask a person (`waiting`) did nothing yet: it fails, as never completed; one
 * waiting on its work elsewhere (a task, its handle kept) is cut off as one running.
 */
import { createFailure, type Failure } from '../../failure.js';
import type { ToolCallRow } from '../../store/index.js';
import { toErrorResult } from '../../tools/tool-result.js';
import type { RunMemory } from './run-memory.js';
import { toSettledCall, type SettledCall } from './settled-call.js';

/** What settling cut-off calls needs from its driver. */
export interface CutOffDeps {
  memory: RunMemory;
  /** Buffers the settled row and its event for the driver's next write. */
  stage(settled: SettledCall): void;
}

/** The calls of one run that its end cut off. */
export interface CutOffCalls {
  /** The ids of the calls whose outcome the run's end left unknown, in the order they were settled. */
  readonly unknown: readonly string[];
  /** Settles the calls still `started` (those `only` keeps) as cut off by `stopReason`. */
  settle(stopReason: string | null, only?: (row: ToolCallRow) => boolean): void;
  /** A terminal failure that names the calls whose outcome is unknown, if there are any. */
  withUnknown(failure: Failure): Failure;
}

/** Creates the record of one run's cut-off calls. */
export function createCutOffCalls(deps: CutOffDeps): CutOffCalls {
  const unknown: string[] = [];
  return {
    unknown,
    settle(stopReason, only = () => true) {
      // A call stopped to ask a person did nothing: the run's end just means it never completes.
      const asking = deps.memory
        .toolCalls()
        .filter((row) => row.status === 'waiting' && row.handle === null && only(row));
      for (const row of asking) {
        const failure = createFailure(
          'tool.failed',
          `Tool '${row.tool}' did not complete: the run ended (${stopReason ?? 'stopped'}) before its question was answered`,
        );
        deps.stage(toSettledCall(row, { status: 'failed', result: toErrorResult(failure) }, { cause: 'aborted' }));
      }
      // A call waiting on its work elsewhere (a task) is as cut off as one running: that work may go on.
      const open = deps.memory
        .toolCalls()
        .filter((row) => (row.status === 'started' || (row.status === 'waiting' && row.handle !== null)) && only(row));
      for (const row of open) {
        const read = row.effect === 'read';
        const why = `the run ended (${stopReason ?? 'stopped'}) while it ran`;
        const failure = read
          ? createFailure('tool.failed', `Tool '${row.tool}' was stopped: ${why}`)
          : createFailure('tool.outcome_unknown', `The outcome of tool '${row.tool}' is unknown: ${why}`, {
              details: { tool_call_id: row.id },
            });
        if (!read) unknown.push(row.id);
        // The result records no time (nothing came back); the event tells how long the call ran.
        const outcome = { status: read ? 'failed' : 'unknown', result: toErrorResult(failure) } as const;
        const ran = row.started_at === null ? 0 : Date.now() - row.started_at;
        deps.stage(toSettledCall(row, outcome, { duration_ms: ran, cause: 'aborted' }));
      }
    },
    withUnknown(failure) {
      if (unknown.length === 0) return failure;
      return { ...failure, details: { ...failure.details, unknown_tool_calls: [...unknown] } };
    },
  };
}
