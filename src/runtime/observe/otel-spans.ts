/**
 * How the tracer writes a span under a run: the attributes every span of a run carries, the
 * content cap, and a child of the run's `invoke_agent` span from its start to its end.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Tracer } from '@opentelemetry/api';
import type { RunEventRecord } from '../model/types.js';
import { underRun } from './trace-ids.js';
import type { TracedRun } from './traced-run.js';

/** What every span writer needs: the tracer, and how content is recorded (null when it is not). */
export interface SpanDeps {
  tracer: Tracer;
  /** Content as an attribute, capped; null unless `TracingOptions.content` is set. */
  content: ((value: unknown) => string) | null;
}

/** What a span writer does with one committed event of the run (`emit` false while replaying its log). */
export type EventHandler = (
  deps: SpanDeps,
  runId: string,
  run: TracedRun,
  event: RunEventRecord,
  emit: boolean,
) => void;

/** Content as text of at most `cap` characters (the last one an ellipsis when cut). */
export function cappedContent(value: unknown, cap: number): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  return text.length > cap ? `${text.slice(0, cap - 1)}…` : text;
}

/** The attributes every span of the run starts with: its id, its session, its agent. */
export function baseAttributes(runId: string, run: TracedRun): Attributes {
  return {
    'baton.run.id': runId,
    ...(run.sessionId ? { 'baton.session.id': run.sessionId } : {}),
    ...(run.agent ? { 'gen_ai.agent.name': run.agent } : {}),
  };
}

/** A span under the run's `invoke_agent` span, from `start` to `end` (a model call is a CLIENT span). */
export function writeChildSpan(
  deps: SpanDeps,
  runId: string,
  name: string,
  start: number,
  end: number,
  attributes: Attributes,
  error?: string,
  kind: SpanKind = SpanKind.INTERNAL,
): void {
  const span = deps.tracer.startSpan(name, { kind, startTime: start, attributes }, underRun(runId));
  if (error) {
    span.setAttribute('error.type', error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  }
  span.end(end);
}
