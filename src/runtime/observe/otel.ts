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
 *
 * This file keeps the runs and orders their events; each event family has its span writer
 * beside it (`otel-run-span`, `otel-chat-span`, `otel-tool-spans`, `otel-approval-span`).
 */
import { trace } from '@opentelemetry/api';
import { SETTLED_STATUSES } from '../../../machines/types.js';
import type { Store } from '../../store/index.js';
import type { LogEventType, RunEventRecord } from '../model/types.js';
import { onApprovalRequest, onApprovalResult } from './otel-approval-span.js';
import { onStep } from './otel-chat-span.js';
import { onRunCreated, onState } from './otel-run-span.js';
import { cappedContent, type EventHandler, type SpanDeps } from './otel-spans.js';
import { onAction, onChild, onCompensation, onResult } from './otel-tool-spans.js';
import { newTracedRun, replayLog, type TracedRun } from './traced-run.js';
import { flushRegisteredProvider, providerRegistered } from './tracer-provider.js';

/** A run that ended or waits for a person: its tracer state is dropped (a resume replays the log). */
const SETTLED: ReadonlySet<string> = new Set(SETTLED_STATUSES);

/** How runs are traced (`RuntimeOptions.tracing`). */
export interface TracingOptions {
  /** Record tool arguments and the planner's decision on spans (default false). */
  content?: boolean;
  /** Most characters of content per attribute (default 1,000). */
  contentChars?: number;
}

/** The tracer of a runtime's runs, fed the events its drivers commit. */
export interface RunTracer {
  /** Events a driver of this runtime just committed, in order. */
  committed(events: readonly RunEventRecord[]): void;
  /** Resolves once every committed event handed in is traced and the registered provider has exported them. */
  drain(): Promise<void>;
}

/** Which span writer takes which event; the other events make no span. */
const HANDLERS: Partial<Record<LogEventType, EventHandler>> = {
  'run.created': onRunCreated,
  state: onState,
  step: onStep,
  action: onAction,
  child: onChild,
  result: onResult,
  compensation: onCompensation,
  approval_request: onApprovalRequest,
  approval_result: onApprovalResult,
};

/** Traces the runs this runtime drives, from the events it commits. */
export function createRunTracer(store: Store, options: TracingOptions = {}): RunTracer {
  const cap = options.contentChars ?? 1_000;
  const deps: SpanDeps = {
    tracer: trace.getTracer('baton'),
    content: options.content ? (value) => cappedContent(value, cap) : null,
  };
  const runs = new Map<string, TracedRun>();
  const chains = new Map<string, Promise<void>>();

  /** The run's state: from its first event, or read from its log when it was resumed here. */
  async function stateOf(runId: string, first: RunEventRecord): Promise<TracedRun> {
    const known = runs.get(runId);
    if (known) return known;
    const run = newTracedRun(first.createdAt);
    runs.set(runId, run);
    await replayLog(store, runId, first.seq, (event) => observe(runId, run, event, false));
    return run;
  }

  /** Takes one committed event into the run's state, emitting the spans it ends when `emit`. */
  function observe(runId: string, run: TracedRun, event: RunEventRecord, emit: boolean): void {
    if (event.seq <= run.lastSeq) return;
    run.lastSeq = event.seq;
    HANDLERS[event.type]?.(deps, runId, run, event, emit);
    // Ended, or waiting (it may leave memory for weeks): what it knew is read from its log if it comes back.
    if (emit && event.type === 'state' && SETTLED.has(String(event.data.to))) {
      runs.delete(runId);
    }
  }

  return {
    committed(events) {
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
    async drain() {
      while (chains.size > 0) await Promise.allSettled([...chains.values()]);
      if (providerRegistered()) await flushRegisteredProvider().catch(() => undefined);
    },
  };
}
