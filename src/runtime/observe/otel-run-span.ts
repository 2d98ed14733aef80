/**
 * The run's own `invoke_agent` span: what `run.created` says of the run, the transitions it
 * went through (as span events), and the span itself once the run ended.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Link } from '@opentelemetry/api';
import type { RunEventRecord } from '../model/types.js';
import { baseAttributes, type EventHandler, type SpanDeps } from './otel-spans.js';
import { runTraceIds, underCall, underRun, withRunIds } from './trace-ids.js';
import type { TracedRun } from './traced-run.js';
import { parseTraceparent } from './traceparent.js';

/** `run.created`: the run's start, session, agent and the caller's span it is linked to. */
export const onRunCreated: EventHandler = (_deps, _runId, run, event) => {
  const data = event.data;
  run.createdAt = event.createdAt;
  run.sessionId = typeof data.session_id === 'string' ? data.session_id : null;
  run.agent = typeof data.agent === 'string' ? data.agent : null;
  run.link = parseTraceparent(typeof data.traceparent === 'string' ? data.traceparent : null);
  const parent = data.parent as { run_id?: unknown; tool_call_id?: unknown } | undefined;
  run.parent =
    typeof parent?.run_id === 'string' && typeof parent.tool_call_id === 'string'
      ? { runId: parent.run_id, callId: parent.tool_call_id }
      : null;
};

/** `state`: a transition to remember; planning is where the next `chat` span starts; an end writes the run's span. */
export const onState: EventHandler = (deps, runId, run, event, emit) => {
  const data = event.data;
  run.transitions.push({ from: String(data.from), to: String(data.to), at: event.createdAt });
  if (data.to === 'planning') run.planningSince = event.createdAt;
  if (emit && (data.to === 'succeeded' || data.to === 'failed')) writeRunSpan(deps, runId, run, event);
};

/** The run's own span, once it ended: with the ids derived from its id when `batonIdGenerator` is installed. */
function writeRunSpan(deps: SpanDeps, runId: string, run: TracedRun, event: RunEventRecord): void {
  const { tracer } = deps;
  const data = event.data;
  const failure = data.failure as { code?: string } | undefined;
  const links: Link[] = run.link ? [{ context: run.link, attributes: { 'baton.link': 'caller' } }] : [];
  const attributes: Attributes = {
    ...baseAttributes(runId, run),
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.id': runId,
    'baton.run.status': String(data.to),
    ...(data.stop_reason ? { 'baton.run.stop_reason': String(data.stop_reason) } : {}),
    'baton.step': Number(data.step_index ?? 0),
  };
  const ids = runTraceIds(runId);
  const parent = run.parent;
  let span = withRunIds(ids, () =>
    parent
      ? // A child run: under the `execute_tool` span of the call that started it, in its root's trace.
        tracer.startSpan(
          'invoke_agent baton',
          { kind: SpanKind.INTERNAL, startTime: run.createdAt, attributes, links },
          underCall(parent.runId, parent.callId),
        )
      : tracer.startSpan('invoke_agent baton', {
          kind: SpanKind.INTERNAL,
          startTime: run.createdAt,
          attributes,
          links,
          root: true,
        }),
  );
  if (span.isRecording() && span.spanContext().spanId !== ids.spanId) {
    // No `batonIdGenerator` in the provider: the run's span joins its trace like its children.
    span = tracer.startSpan(
      'invoke_agent baton',
      { kind: SpanKind.INTERNAL, startTime: run.createdAt, attributes, links },
      underRun(runId),
    );
  }
  for (const t of run.transitions.slice(-100))
    span.addEvent('baton.state', { 'baton.state.from': t.from, 'baton.state.to': t.to }, t.at);
  if (failure?.code) {
    span.setAttribute('error.type', failure.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure.code });
  }
  span.end(event.createdAt);
}
