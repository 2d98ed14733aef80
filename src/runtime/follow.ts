/**
 * Following runs: the committed events of a run then its live ones, and waiting until a run
 * settles. Only committed events are delivered: the hub publishes after each COMMIT.
 */
import { BatonError, createFailure, fail, type Failure } from '../failure.js';
import type { Store } from '../store/index.js';
import type { EventHub } from './event-hub.js';
import { isTerminalEvent, toEvent, toRun } from './rows.js';
import type { Run, RunEventRecord } from './types.js';

const SETTLED: ReadonlySet<string> = new Set(['succeeded', 'failed', 'waiting_human']);
const ACTIVE: ReadonlySet<string> = new Set(['pending', 'planning', 'executing', 'waiting_human']);
const PAGE = 500;
/** How often the log of a run driven by another process is read while following it. */
const REMOTE_POLL_MS = 200;

/** What following needs from the runtime. */
export interface FollowContext {
  store: Store;
  hub: EventHub;
  /** The in-memory status of a run this runtime drives, if it drives it. */
  liveStatus(runId: string): string | undefined;
  isClosed(): boolean;
  /** Callbacks run once when the runtime closes. */
  onClose: Set<() => void>;
}

/** The committed events after `after`, then live ones until the run ends (unless `follow: false`). */
export async function* followEvents(
  ctx: FollowContext,
  runId: string,
  opts: { after?: number; follow?: boolean },
): AsyncGenerator<RunEventRecord> {
  const { store, hub } = ctx;
  if (!store.getRun(runId)) fail('run.not_found', `Run '${runId}' does not exist`);
  const pending: RunEventRecord[] = [];
  let wake: (() => void) | undefined;
  let failed: Failure | undefined;
  // Subscribe before reading the log, so nothing committed in between is missed.
  const unsubscribe = hub.subscribe(runId, (event) => {
    pending.push(event);
    wake?.();
  });
  const unsubscribeFailure = hub.onFailure(runId, (failure) => {
    failed = failure;
    wake?.();
  });
  try {
    let last = opts.after ?? 0;
    for (;;) {
      const page = store.listEvents(runId, last, PAGE).map(toEvent);
      for (const event of page) {
        yield event;
        last = event.seq;
        if (isTerminalEvent(event)) return;
      }
      if (page.length < PAGE) break;
    }
    if (opts.follow === false) return;
    for (;;) {
      while (pending.length > 0) {
        const event = pending.shift()!;
        if (event.type === 'draft') {
          yield event;
          continue;
        }
        if (event.seq <= last) continue;
        yield event;
        last = event.seq;
        if (isTerminalEvent(event)) return;
      }
      if (failed) throw new BatonError(failed);
      if (ctx.isClosed()) return;
      // A run driven by another process publishes nothing here: its log is polled instead.
      const remote = ctx.liveStatus(runId) === undefined;
      if (remote) {
        const rows = store.listEvents(runId, last, PAGE).map(toEvent);
        if (rows.length > 0) {
          pending.push(...rows);
          continue;
        }
        if (!ACTIVE.has(store.getRun(runId)?.status ?? '')) return;
      }
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        ctx.onClose.add(resolve);
        if (remote) timer = setTimeout(resolve, REMOTE_POLL_MS);
      });
      clearTimeout(timer);
      if (wake) ctx.onClose.delete(wake);
      wake = undefined;
    }
  } finally {
    unsubscribe();
    unsubscribeFailure();
  }
}

/** Resolves when the run is terminal or waiting for a human, durably and in memory. */
export function waitForRun(ctx: FollowContext, runId: string): Promise<Run> {
  const { store, hub } = ctx;
  return new Promise<Run>((resolve, reject) => {
    const settled = (): boolean => {
      const row = store.getRun(runId);
      if (!row) {
        reject(new BatonError(createFailure('run.not_found', `Run '${runId}' does not exist`)));
        return true;
      }
      // Durable and current: a live run may already have moved on (e.g. a decision
      // committed before a crash is being resumed) without that move being committed yet.
      const current = ctx.liveStatus(runId);
      if (!SETTLED.has(row.status) || (current !== undefined && current !== row.status)) return false;
      resolve(toRun(row));
      return true;
    };
    const stop = () => {
      unsubscribe();
      unsubscribeFailure();
      ctx.onClose.delete(closing);
    };
    const closing = () => {
      stop();
      reject(new BatonError(createFailure('run.closed', `The runtime closed while waiting for run '${runId}'`)));
    };
    const unsubscribe = hub.subscribe(runId, (event) => {
      if (event.type === 'state' && SETTLED.has(String(event.data.to)) && settled()) stop();
    });
    const unsubscribeFailure = hub.onFailure(runId, (failure) => {
      stop();
      reject(new BatonError(failure));
    });
    if (ctx.isClosed()) closing();
    else if (settled()) stop();
    else ctx.onClose.add(closing);
  });
}
