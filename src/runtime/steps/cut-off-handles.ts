/**
 * Work a run's calls started elsewhere that its end cut off (a call with a saved handle, an MCP
 * task, still running when the run was cancelled or timed out): once the run's end is durable,
 * each tool that knows how is asked to cancel it (`cancelHandle`), best effort. A runtime that
 * closes does not: its runs resume and follow their handles.
 */
import { toFailure, type Failure } from '../../failure.js';
import { stepAgentOf, type LiveRun, type RuntimeEnv } from '../drive/env.js';

/** Asks the tools of the calls the run's end cut off to cancel the work their handles name. */
export function cancelCutOffHandles(env: RuntimeEnv, run: LiveRun, onError: (failure: Failure) => void): void {
  for (const row of run.driver.memory.toolCalls()) {
    // Cut off by the end (or left unknown before it): the work may still be going on.
    if (row.handle === null || (row.status !== 'unknown' && row.status !== 'started')) continue;
    const tool = stepAgentOf(env, run, row.step_index).tools.get(row.tool);
    if (!tool?.cancelHandle) continue;
    const handle = JSON.parse(row.handle) as unknown;
    void Promise.resolve()
      .then(() => tool.cancelHandle!(handle, { runId: run.driver.runId, toolCallId: row.id }))
      .catch((error: unknown) => onError(toFailure(error, 'tool.failed')));
  }
}
