/**
 * The ids of a run's trace, the same in every process: its trace id and its `invoke_agent` span
 * id are derived from the run id, so a span written after a restart has the same parent as one
 * written before. The span ids reach the tracer through `batonIdGenerator`, which the application
 * installs in its tracer provider.
 */
import { createHash, randomBytes } from 'node:crypto';
import { context, trace, TraceFlags, type Context } from '@opentelemetry/api';

/** The ids of a run's trace: derived from its id, the same in every process. */
export function runTraceIds(runId: string): { traceId: string; spanId: string } {
  const digest = createHash('sha256').update(`baton.run:${runId}`).digest('hex');
  // A child run (an agent called as a tool: `<root>.s<n>.c<m>.child…`) is in its root's trace.
  const root = runId.endsWith('.child') ? runId.slice(0, runId.indexOf('.')) : runId;
  const traceId = root === runId ? digest.slice(0, 32) : runTraceIds(root).traceId;
  return { traceId, spanId: digest.slice(32, 48) };
}

/**
 * The `execute_tool` span of a call that started a child run: its id derived from the call's, so
 * the child's `invoke_agent` span, written by whichever process ends the child, names it as parent.
 */
export function callSpanIds(runId: string, callId: string): { traceId: string; spanId: string } {
  const digest = createHash('sha256').update(`baton.call:${callId}`).digest('hex');
  return { traceId: runTraceIds(runId).traceId, spanId: digest.slice(0, 16) };
}

/** A context whose parent is the `execute_tool` span of the call that started a child run. */
export function underCall(runId: string, callId: string): Context {
  return trace.setSpanContext(context.active(), {
    ...callSpanIds(runId, callId),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: false,
  });
}

/** The ids the generator hands out while a run's own span starts; null the rest of the time. */
let armed: { traceId: string; spanId: string } | null = null;

/**
 * An id generator for the application's tracer provider (`new BasicTracerProvider({ idGenerator:
 * batonIdGenerator })`): random ids, except for a run's `invoke_agent` span, which gets the ids
 * derived from its run id, so spans written before and after a restart share their parent.
 */
export const batonIdGenerator = {
  generateTraceId(): string {
    const ids = armed;
    return ids ? ids.traceId : randomBytes(16).toString('hex');
  },
  generateSpanId(): string {
    const ids = armed;
    return ids ? ids.spanId : randomBytes(8).toString('hex');
  },
};

/**
 * Calls `start` with `batonIdGenerator` handing out `ids`: the span started inside gets them.
 * Starting a span is synchronous, so no other span can take them in between.
 */
export function withRunIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
  armed = ids;
  try {
    return start();
  } finally {
    armed = null;
  }
}

/** A context whose parent is the run's `invoke_agent` span, whichever process writes under it. */
export function underRun(runId: string): Context {
  return trace.setSpanContext(context.active(), {
    ...runTraceIds(runId),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: false,
  });
}
