/**
 * What the OpenTelemetry tracer keeps of a run between its events: what has started and not
 * ended. It lives in memory while the run is driven here, and is rebuilt from the run's log
 * when a run resumed in this process (or back from a wait) commits its next event.
 */
import type { SpanContext } from '@opentelemetry/api';
import type { Store } from '../../store/index.js';
import type { RunEventRecord } from '../model/types.js';

/** What a run's tracer keeps between events: what has started and not ended. */
export interface TracedRun {
  createdAt: number;
  sessionId: string | null;
  /** The agent the run belongs to (from `run.created`), for `gen_ai.agent.name`. */
  agent: string | null;
  link: SpanContext | null;
  /** For a child run: its parent and the call that started it (from `run.created`); its span goes under that call's. */
  parent: { runId: string; callId: string } | null;
  planningSince: number | null;
  actions: Map<string, RunEventRecord>;
  approvals: Map<string, RunEventRecord>;
  transitions: { from: string; to: string; at: number }[];
  lastSeq: number;
}

/** A run the tracer knows nothing of yet, from the time of its first event seen here. */
export function newTracedRun(createdAt: number): TracedRun {
  return {
    createdAt,
    sessionId: null,
    agent: null,
    link: null,
    parent: null,
    planningSince: null,
    actions: new Map(),
    approvals: new Map(),
    transitions: [],
    lastSeq: 0,
  };
}

/** Hands `take` every committed event of the run before `seq`, in order, a page at a time. */
export async function replayLog(
  store: Store,
  runId: string,
  seq: number,
  take: (event: RunEventRecord) => void,
): Promise<void> {
  for (let after = 0; after < seq - 1;) {
    const page = await store.listEvents(runId, after, Math.min(1_000, seq - 1 - after));
    if (page.length === 0) break;
    for (const row of page) {
      take({ runId, seq: row.seq, type: row.type, data: JSON.parse(row.data), createdAt: row.created_at });
    }
    after = page.at(-1)!.seq;
  }
}
