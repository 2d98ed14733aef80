/**
 * OpenTelemetry spans of runs, following the GenAI semantic conventions: `invoke_agent` for the
 * run, `chat` for each planner call, `execute_tool` for each tool call, and a span for each human
 * wait for an approval. Spans are made from committed events, in the process that committed
 * them, so each is emitted once: a crash loses what was not committed, and what is committed
 * later is traced by the process that resumes the run.
 *
 * One trace per run whatever the processes: its trace id and its `invoke_agent` span id are
 * derived from the run id, so a span written after a restart has the same parent as one written
 * before. The span ids are given to the tracer through `batonIdGenerator`, which the
 * application installs in its tracer provider (without it, the run's spans still share the
 * trace id, under a parent that is not exported). Only `@opentelemetry/api` is used: with no
 * provider registered, every span is a no-op. No prompt or tool content is recorded unless
 * `content` is set (tool arguments and decisions, capped; results stay in the ledger).
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Link, type SpanContext } from '@opentelemetry/api';
import type { Store } from '../../store/index.js';
import type { RunEventRecord } from '../model/types.js';
import { runTraceIds, underRun, withRunIds } from './trace-ids.js';
import { flushRegisteredProvider, providerRegistered } from './tracer-provider.js';
import { parseTraceparent } from './traceparent.js';

/** How runs are traced (`RuntimeOptions.tracing`). */
export interface TracingOptions {
  /** Record tool arguments and the planner's decision on spans (default false). */
  content?: boolean;
  /** Most characters of content per attribute (default 1,000). */
  contentChars?: number;
}

/** What a run's tracer keeps between events: what has started and not ended. */
interface RunState {
  createdAt: number;
  sessionId: string | null;
  /** The agent the run belongs to (from `run.created`), for `gen_ai.agent.name`. */
  agent: string | null;
  link: SpanContext | null;
  planningSince: number | null;
  actions: Map<string, RunEventRecord>;
  approvals: Map<string, RunEventRecord>;
  transitions: { from: string; to: string; at: number }[];
  lastSeq: number;
}

/** Traces the runs this runtime drives, from the events it commits. */
export function createRunTracer(store: Store, options: TracingOptions = {}) {
  const tracer = trace.getTracer('baton');
  const runs = new Map<string, RunState>();
  const chains = new Map<string, Promise<void>>();
  const cap = options.contentChars ?? 1_000;
  const content = (value: unknown): string => {
    const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    return text.length > cap ? `${text.slice(0, cap - 1)}…` : text;
  };

  /** The run's state: from its first event, or read from its log when it was resumed here. */
  async function stateOf(runId: string, first: RunEventRecord): Promise<RunState> {
    let state = runs.get(runId);
    if (state) return state;
    state = {
      createdAt: first.createdAt,
      sessionId: null,
      agent: null,
      link: null,
      planningSince: null,
      actions: new Map(),
      approvals: new Map(),
      transitions: [],
      lastSeq: 0,
    };
    runs.set(runId, state);
    for (let after = 0; after < first.seq - 1;) {
      const page = await store.listEvents(runId, after, Math.min(1_000, first.seq - 1 - after));
      if (page.length === 0) break;
      for (const row of page) {
        observe(
          runId,
          state,
          { runId, seq: row.seq, type: row.type, data: JSON.parse(row.data), createdAt: row.created_at },
          false,
        );
      }
      after = page.at(-1)!.seq;
    }
    return state;
  }

  const baseOf = (runId: string, state: RunState): Attributes => ({
    'baton.run.id': runId,
    ...(state.sessionId ? { 'baton.session.id': state.sessionId } : {}),
    ...(state.agent ? { 'gen_ai.agent.name': state.agent } : {}),
  });

  /** A span under the run's `invoke_agent` span, from `start` to `end` (a model call is a CLIENT span). */
  function child(
    runId: string,
    name: string,
    start: number,
    end: number,
    attributes: Attributes,
    error?: string,
    kind: SpanKind = SpanKind.INTERNAL,
  ) {
    const span = tracer.startSpan(name, { kind, startTime: start, attributes }, underRun(runId));
    if (error) {
      span.setAttribute('error.type', error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    }
    span.end(end);
  }

  /** The run's own span, once it ended: with the ids derived from its id when `batonIdGenerator` is installed. */
  function runSpan(runId: string, state: RunState, event: RunEventRecord) {
    const data = event.data;
    const failure = data.failure as { code?: string } | undefined;
    const links: Link[] = state.link ? [{ context: state.link, attributes: { 'baton.link': 'caller' } }] : [];
    const attributes: Attributes = {
      ...baseOf(runId, state),
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': runId,
      'baton.run.status': String(data.to),
      ...(data.stop_reason ? { 'baton.run.stop_reason': String(data.stop_reason) } : {}),
      'baton.step': Number(data.step_index ?? 0),
    };
    const ids = runTraceIds(runId);
    let span = withRunIds(ids, () =>
      tracer.startSpan('invoke_agent baton', {
        kind: SpanKind.INTERNAL,
        startTime: state.createdAt,
        attributes,
        links,
        root: true,
      }),
    );
    if (span.isRecording() && span.spanContext().spanId !== ids.spanId) {
      // No `batonIdGenerator` in the provider: the run's span joins its trace like its children.
      span = tracer.startSpan(
        'invoke_agent baton',
        { kind: SpanKind.INTERNAL, startTime: state.createdAt, attributes, links },
        underRun(runId),
      );
    }
    for (const t of state.transitions.slice(-100))
      span.addEvent('baton.state', { 'baton.state.from': t.from, 'baton.state.to': t.to }, t.at);
    if (failure?.code) {
      span.setAttribute('error.type', failure.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.code });
    }
    span.end(event.createdAt);
  }

  /** Takes one committed event into the run's state, emitting the spans it ends when `emit`. */
  function observe(runId: string, state: RunState, event: RunEventRecord, emit: boolean): void {
    if (event.seq <= state.lastSeq) return;
    state.lastSeq = event.seq;
    const data = event.data;
    switch (event.type) {
      case 'run.created':
        state.createdAt = event.createdAt;
        state.sessionId = typeof data.session_id === 'string' ? data.session_id : null;
        state.agent = typeof data.agent === 'string' ? data.agent : null;
        state.link = parseTraceparent(typeof data.traceparent === 'string' ? data.traceparent : null);
        break;
      case 'state': {
        state.transitions.push({ from: String(data.from), to: String(data.to), at: event.createdAt });
        if (data.to === 'planning') state.planningSince = event.createdAt;
        if (emit && (data.to === 'succeeded' || data.to === 'failed')) runSpan(runId, state, event);
        break;
      }
      case 'step': {
        const usage = (data.usage ?? {}) as Record<string, number>;
        const decision = (data.decision ?? {}) as Record<string, unknown>;
        const model =
          typeof data.model === 'string' ? data.model : typeof usage.model === 'string' ? usage.model : 'planner';
        if (emit) {
          child(
            runId,
            `chat ${model}`,
            state.planningSince ?? event.createdAt,
            event.createdAt,
            {
              ...baseOf(runId, state),
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': typeof data.provider === 'string' ? data.provider : 'baton',
              'gen_ai.request.model': model,
              'gen_ai.usage.input_tokens': Number(usage.input_tokens ?? 0),
              'gen_ai.usage.output_tokens': Number(usage.output_tokens ?? 0),
              'gen_ai.response.finish_reasons': [
                decision.type === 'final' ? 'stop' : String(decision.type ?? 'unknown'),
              ],
              'baton.step': Number(data.step_index ?? 0),
              ...(options.content ? { 'baton.decision': content(decision) } : {}),
            },
            undefined,
            SpanKind.CLIENT,
          );
        }
        state.planningSince = null;
        break;
      }
      case 'action':
        state.actions.set(String(data.tool_call_id), event);
        break;
      case 'result': {
        const started = state.actions.get(String(data.tool_call_id));
        state.actions.delete(String(data.tool_call_id));
        if (!emit) break;
        const failure = data.failure as { code?: string } | undefined;
        child(
          runId,
          `execute_tool ${String(data.tool)}`,
          started?.createdAt ?? event.createdAt,
          event.createdAt,
          {
            ...baseOf(runId, state),
            ...toolAttributes(data, started),
            'gen_ai.operation.name': 'execute_tool',
            'baton.step': Number(data.step_index ?? started?.data.step_index ?? stepOfCall(data.tool_call_id)),
            ...(started?.data.risk ? { 'baton.tool.risk': String(started.data.risk) } : {}),
            ...mcpOrigin(started?.data.origin),
            ...(options.content
              ? {
                  'gen_ai.tool.call.arguments': content(started?.data.args),
                }
              : {}),
          },
          failure?.code,
        );
        break;
      }
      case 'compensation': {
        // Undoing a completed call: its own span, from `started` to how it ended.
        if (data.status === 'started') {
          state.actions.set(String(data.tool_call_id), event);
          break;
        }
        const started = state.actions.get(String(data.tool_call_id));
        state.actions.delete(String(data.tool_call_id));
        if (!emit || data.status === 'skipped') break;
        const failure = data.failure as { code?: string } | undefined;
        child(
          runId,
          `baton.compensate ${String(data.tool)}`,
          started?.createdAt ?? event.createdAt,
          event.createdAt,
          {
            ...baseOf(runId, state),
            ...toolAttributes(data, started),
            'baton.compensation.of': String(data.compensates),
          },
          failure?.code,
        );
        break;
      }
      case 'approval_request':
        state.approvals.set(String(data.approval_id), event);
        break;
      case 'approval_result': {
        const asked = state.approvals.get(String(data.approval_id));
        state.approvals.delete(String(data.approval_id));
        if (!emit) break;
        child(runId, 'baton.approval', asked?.createdAt ?? event.createdAt, event.createdAt, {
          ...baseOf(runId, state),
          'baton.approval.id': String(data.approval_id),
          'baton.approval.decision': String(data.decision),
          ...(data.by ? { 'baton.approval.decided_by': String(data.by) } : {}),
          ...(asked?.data.reason ? { 'baton.approval.reason': String(asked.data.reason) } : {}),
        });
        break;
      }
    }
    // Ended, or waiting (it may leave memory for weeks): what it knew is read from its log if it comes back.
    if (emit && event.type === 'state' && ['succeeded', 'failed', 'waiting_human'].includes(String(data.to))) {
      runs.delete(runId);
    }
  }

  return {
    /** Events a driver of this runtime just committed, in order. */
    committed(events: readonly RunEventRecord[]): void {
      // No provider: nothing to make. What a run knew is dropped, so it is read from the log if one comes.
      if (!providerRegistered()) {
        for (const event of events) runs.delete(event.runId);
        return;
      }
      for (const event of events) {
        if (event.type === 'draft') continue;
        const runId = event.runId;
        const known = runs.get(runId);
        // The common case, synchronously: the run's state is here and nothing of it is pending.
        if (known && !chains.has(runId)) {
          observe(runId, known, event, true);
          continue;
        }
        const previous = chains.get(runId) ?? Promise.resolve();
        const next = previous
          .then(async () => observe(runId, await stateOf(runId, event), event, true))
          .catch(() => undefined);
        chains.set(runId, next);
        void next.finally(() => {
          if (chains.get(runId) === next) chains.delete(runId);
        });
      }
    },
    /** Resolves once every committed event handed in is traced and the registered provider has exported them. */
    async drain(): Promise<void> {
      while (chains.size > 0) await Promise.allSettled([...chains.values()]);
      if (providerRegistered()) await flushRegisteredProvider().catch(() => undefined);
    },
  };
}

export type RunTracer = ReturnType<typeof createRunTracer>;

/** The step of a ledger call id (`<run>.s<step>.c<index>`), for events written before they carried it. */
function stepOfCall(callId: unknown): number {
  const match = /\.s(\d+)\.c\d+$/.exec(String(callId));
  return match ? Number(match[1]) : 0;
}

/** An MCP tool's server and name on it, as span attributes (nothing for other tools). */
function mcpOrigin(origin: unknown): Record<string, string> {
  const o = origin as { kind?: unknown; server?: unknown; tool?: unknown } | undefined;
  if (o?.kind !== 'mcp') return {};
  return { 'baton.mcp.server': String(o.server), 'baton.mcp.tool': String(o.tool) };
}

/** What a tool call's span and a compensation's span both say: the tool, the ledger id, how it ended, its effect and attempt. */
function toolAttributes(
  data: Record<string, unknown>,
  started: RunEventRecord | undefined,
): Record<string, string | number> {
  return {
    'gen_ai.tool.name': String(data.tool),
    'gen_ai.tool.call.id': String(data.tool_call_id),
    'baton.tool.outcome': String(data.status),
    ...(started?.data.effect ? { 'baton.tool.effect': String(started.data.effect) } : {}),
    ...(started?.data.attempt ? { 'baton.tool.attempt': Number(started.data.attempt) } : {}),
  };
}
