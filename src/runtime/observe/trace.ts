/**
 * The trace of a run: its steps and spans (planning, tool calls, human waits, compensations) with durations,
 * tokens, argument summaries and decisions, built from the event log. No chain-of-thought is
 * stored, so none is shown.
 */
import type { Run, RunEventRecord, Step } from '../model/types.js';

/** One timed piece of a run. */
export interface Span {
  name: string;
  kind: 'run' | 'plan' | 'tool' | 'approval' | 'compensation';
  startedAt: number;
  endedAt: number | null;
  durationMs: number | null;
  attributes: Record<string, unknown>;
}

/** Everything a trace viewer (or an OpenTelemetry exporter) needs about one run. */
export interface Trace {
  run: Run;
  steps: Step[];
  spans: Span[];
}

const SUMMARY_CHARS = 200;

function summary(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

function span(
  name: string,
  kind: Span['kind'],
  start: number,
  end: number | null,
  attributes: Record<string, unknown>,
): Span {
  return { name, kind, startedAt: start, endedAt: end, durationMs: end === null ? null : end - start, attributes };
}

/** Builds a run's trace from its committed events and steps. */
export function buildTrace(run: Run, steps: Step[], events: RunEventRecord[]): Trace {
  const spans: Span[] = [];
  const terminal = events.find((e) => e.type === 'state' && (e.data.to === 'succeeded' || e.data.to === 'failed'));
  spans.push(
    span(`run ${run.id}`, 'run', run.createdAt, terminal?.createdAt ?? null, {
      status: run.status,
      stop_reason: run.stopReason,
      ...run.usage,
    }),
  );
  let planningSince: number | null = null;
  const actions = new Map<string, RunEventRecord>();
  const approvals = new Map<string, RunEventRecord>();
  const undoing = new Map<string, RunEventRecord>();
  for (const event of events) {
    const data = event.data;
    if (event.type === 'state' && data.to === 'planning') planningSince = event.createdAt;
    if (event.type === 'step') {
      const step = steps.find((s) => s.stepIndex === data.step_index);
      spans.push(
        span(`plan step ${String(data.step_index)}`, 'plan', planningSince ?? event.createdAt, event.createdAt, {
          decision: data.decision,
          usage: data.usage,
          ...(step?.context ? { context: step.context } : {}),
        }),
      );
      planningSince = null;
    }
    if (event.type === 'action') actions.set(String(data.tool_call_id), event);
    if (event.type === 'result') {
      const started = actions.get(String(data.tool_call_id));
      actions.delete(String(data.tool_call_id));
      spans.push(
        span(`tool ${String(data.tool)}`, 'tool', started?.createdAt ?? event.createdAt, event.createdAt, {
          tool_call_id: data.tool_call_id,
          status: data.status,
          ...(started ? { args: summary(started.data.args), attempt: started.data.attempt } : {}),
          ...(data.failure ? { failure: data.failure } : {}),
        }),
      );
    }
    if (event.type === 'compensation' && data.status === 'started') undoing.set(String(data.tool_call_id), event);
    else if (event.type === 'compensation') {
      const started = undoing.get(String(data.tool_call_id));
      undoing.delete(String(data.tool_call_id));
      spans.push(
        span(`undo ${String(data.tool)}`, 'compensation', started?.createdAt ?? event.createdAt, event.createdAt, {
          tool_call_id: data.tool_call_id,
          compensates: data.compensates,
          status: data.status,
          ...(started ? { attempt: started.data.attempt } : {}),
          ...(data.reason ? { reason: data.reason } : {}),
          ...(data.failure ? { failure: data.failure } : {}),
        }),
      );
    }
    if (event.type === 'approval_request') approvals.set(String(data.approval_id), event);
    if (event.type === 'approval_result') {
      const asked = approvals.get(String(data.approval_id));
      approvals.delete(String(data.approval_id));
      spans.push(
        span(`approval ${String(data.approval_id)}`, 'approval', asked?.createdAt ?? event.createdAt, event.createdAt, {
          decision: data.decision,
          by: data.by,
          reason: data.reason,
          ...(asked ? { reason_asked: asked.data.reason } : {}),
        }),
      );
    }
  }
  // What is still open: a tool call in flight, an approval not yet decided.
  for (const [id, started] of actions) {
    spans.push(span(`tool ${String(started.data.tool)}`, 'tool', started.createdAt, null, { tool_call_id: id }));
  }
  for (const [id, started] of undoing) {
    spans.push(
      span(`undo ${String(started.data.tool)}`, 'compensation', started.createdAt, null, {
        tool_call_id: id,
        compensates: started.data.compensates,
      }),
    );
  }
  for (const [id, asked] of approvals) {
    spans.push(span(`approval ${id}`, 'approval', asked.createdAt, null, { reason_asked: asked.data.reason }));
  }
  return { run, steps, spans: spans.sort((a, b) => a.startedAt - b.startedAt) };
}
