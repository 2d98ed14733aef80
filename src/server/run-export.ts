/**
 * A whole run as one JSON document: the run, its events, steps, ledger, approvals, trace and the
 * artifacts it stored (referenced by URL, not inlined). The same shape the inspector exports;
 * `GET /v1/runs/{id}/export` and `baton export` give it. Importing is not supported.
 */
import type { Runtime } from '../index.js';
import { toApprovalJson, toEventJson, toRunJson, toSnakeJson, toToolCallJson } from './to-json.js';

/** Pages of events read at once while exporting. */
const PAGE = 10_000;

/** The export document of a run (snake_case, like every API answer). */
export async function buildRunExport(runtime: Runtime, runId: string): Promise<Record<string, unknown>> {
  const run = await runtime.get(runId);
  const events = [];
  for (let page = await runtime.readEvents(runId, { limit: PAGE }); page.length > 0;) {
    events.push(...page);
    page = page.length < PAGE ? [] : await runtime.readEvents(runId, { after: page.at(-1)!.seq, limit: PAGE });
  }
  const [steps, toolCalls, approvals, trace, artifacts] = await Promise.all([
    runtime.steps(runId),
    runtime.toolCalls(runId),
    runtime.approvals(runId),
    runtime.trace(runId),
    runtime.artifacts(runId),
  ]);
  const id = encodeURIComponent(runId);
  return {
    format: 'baton.run-export',
    version: 1,
    exported_at: new Date().toISOString(),
    run: toRunJson(run),
    events: events.map(toEventJson),
    steps: steps.map(toSnakeJson),
    tool_calls: toolCalls.map(toToolCallJson),
    approvals: approvals.map(toApprovalJson),
    trace: { steps: trace.steps.map(toSnakeJson), spans: trace.spans.map(toSnakeJson) },
    artifacts: artifacts.map((ref) => ({
      ...(toSnakeJson(ref) as object),
      url: `/v1/runs/${id}/artifacts/${ref.sha256}`,
    })),
  };
}
