/**
 * Following runs: the committed events of a run then its live ones, and waiting until a run
 * settles. Only committed events are delivered: the hub publishes after each COMMIT.
 */
import { ACTIVE_STATUSES, QUEUED_STATUS, SETTLED_STATUSES } from '../../../machines/types.js';
import { BatonError, createFailure, fail, quoteId, type Failure } from '../../failure.js';
import type { RunRow, Store } from '../../store/index.js';
import type { EventHub } from '../model/event-hub.js';
import { isTerminalEvent } from '../../../machines/run-status.js';
import { toEvent, toRun } from '../model/rows.js';
import { pendingInputRow } from './pending-input.js';
import { withTree } from './run-tree.js';
import type { Run, RunEventRecord } from '../model/types.js';

const SETTLED: ReadonlySet<string> = new Set(SETTLED_STATUSES);
/** Statuses of a run that has not ended: a queued one has not even begun. */
const GOING: ReadonlySet<string> = new Set([QUEUED_STATUS, ...ACTIVE_STATUSES]);
const PAGE = 500;
/** Live events held for a reader before it is sent back to the log instead (memory per reader stays bounded). */
export const BUFFER_LIMIT = 1_000;
/** How often the log of a run driven by another process is read while following it. */
const REMOTE_POLL_MS = 200;
/** How often the log of a run waiting in the file (not held by any process) is read while following it. */
const WAITING_POLL_MS = 1_000;

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

/** How a run's events are followed. */
export interface FollowOptions {
  /** Events with a `seq` above this one (default 0: all). */
  after?: number | undefined;
  /** Keep following live events until the run ends (default true); false stops at the end of the log. */
  follow?: boolean | undefined;
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal | undefined;
}

/**
 * A run's committed events after `after`, in `seq` order and each once, then its live ones
 * until its terminal event (unless `follow: false`); drafts pass through live. The one
 * subscription primitive: the server's SSE streams and the CLI are built on it.
 * Invariants: the live subscription is taken before the log is read, so nothing committed in
 * between is missed; a consumer that falls more than `BUFFER_LIMIT` events behind costs no more
 * memory — its live buffer is dropped and it reads on from the log, as it does for any gap; a
 * run driven by another process is read from its log.
 */
export async function* followEvents(
  ctx: FollowContext,
  runId: string,
  opts: FollowOptions,
): AsyncGenerator<RunEventRecord> {
  const { store, hub } = ctx;
  if (!(await store.getRun(runId))) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
  const pending: RunEventRecord[] = [];
  let behind = false;
  let wake: (() => void) | undefined;
  let failed: Failure | undefined;
  const signal = opts.signal;
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  // Subscribe before reading the log, so nothing committed in between is missed.
  const unsubscribe = hub.subscribe(runId, (event) => {
    if (behind) return;
    if (pending.length >= BUFFER_LIMIT) {
      // Too slow a reader: the log holds everything committed, it reads on from there.
      pending.length = 0;
      behind = true;
    } else {
      pending.push(event);
    }
    wake?.();
  });
  const unsubscribeFailure = hub.onFailure(runId, (failure) => {
    failed = failure;
    wake?.();
  });
  let last = opts.after ?? 0;
  let ended = false;
  /** Everything the log has after `last`, in pages; sets `ended` at the terminal event. */
  async function* fromLog(): AsyncGenerator<RunEventRecord> {
    for (;;) {
      const page = (await store.listEvents(runId, last, PAGE)).map(toEvent);
      for (const event of page) {
        yield event;
        last = event.seq;
        if (isTerminalEvent(event)) {
          ended = true;
          return;
        }
        if (signal?.aborted) return;
      }
      if (page.length < PAGE) return;
    }
  }
  try {
    yield* fromLog();
    if (ended || opts.follow === false) return;
    for (;;) {
      if (signal?.aborted) return;
      if (behind) {
        // Reset first: whatever is published from now on is buffered, the rest is in the log.
        behind = false;
        pending.length = 0;
        yield* fromLog();
        if (ended) return;
        continue;
      }
      while (pending.length > 0 && !behind) {
        const event = pending.shift()!;
        if (event.type === 'draft') {
          yield event;
          continue;
        }
        if (event.seq <= last) continue;
        if (event.seq > last + 1) {
          // A gap (never expected): the log has what was missed.
          behind = true;
          break;
        }
        yield event;
        last = event.seq;
        if (isTerminalEvent(event)) return;
        if (signal?.aborted) return;
      }
      if (behind) continue;
      if (failed) throw new BatonError(failed);
      if (ctx.isClosed()) return;
      // A run driven by another process publishes nothing here: its log is polled instead.
      const remote = ctx.liveStatus(runId) === undefined;
      let status: string | undefined;
      if (remote) {
        const rows = (await store.listEvents(runId, last, PAGE)).map(toEvent);
        if (rows.length > 0) {
          pending.push(...rows);
          continue;
        }
        status = (await store.getRun(runId))?.status;
        if (!GOING.has(status ?? '')) {
          // It ended between the two reads: the transaction that ended it wrote its last events
          // too, so the log has them now; they go out before the stream ends.
          const rest = (await store.listEvents(runId, last, PAGE)).map(toEvent);
          if (rest.length === 0) return;
          pending.push(...rest);
          continue;
        }
      }
      let timer: NodeJS.Timeout | undefined;
      // A run waiting in the file moves when someone decides: here (published live) or in
      // another process (seen in the log, polled less often).
      const pollMs =
        remote && (status === 'waiting_human' || status === QUEUED_STATUS) ? WAITING_POLL_MS : REMOTE_POLL_MS;
      await new Promise<void>((resolve) => {
        wake = resolve;
        ctx.onClose.add(resolve);
        // Driven here, it publishes what it commits; but it may leave memory to wait (for a
        // task, say) and move later without a word here: looked at now and then too. Not
        // unref'd: a caller following the run keeps its process alive until it ends.
        timer = setTimeout(resolve, remote ? pollMs : WAITING_POLL_MS);
        if (signal?.aborted) resolve();
      });
      clearTimeout(timer);
      if (wake) ctx.onClose.delete(wake);
      wake = undefined;
    }
  } finally {
    unsubscribe();
    unsubscribeFailure();
    signal?.removeEventListener('abort', onAbort);
  }
}

/** True when the wait a run waits on is about to be applied: decided since the row was read, or past its expiry instant. */
async function expiring(store: Store, row: RunRow): Promise<boolean> {
  if (!row.pending_approval_id) return false;
  const wait = await store.getApproval(row.pending_approval_id);
  // Decided (or expired) since the row was read, and not yet applied: the run is about to move too.
  if (wait && wait.status !== 'pending') return true;
  return wait?.status === 'pending' && wait.expires_at !== null && wait.expires_at <= Date.now();
}

/**
 * Resolves when the run is terminal or waiting for a human, durably and in memory (a run whose
 * call asks a person in flight, while it executes, counts as waiting).
 */
export function waitForRun(ctx: FollowContext, runId: string): Promise<Run> {
  const { store, hub } = ctx;
  return new Promise<Run>((resolve, reject) => {
    let done = false;
    let poll: NodeJS.Timeout | undefined;
    /** Reads the row; settles the promise when the run has settled. Checks run one at a time. */
    let checking: Promise<void> | null = null;
    let recheck = false;
    const check = (): void => {
      if (done) return;
      if (checking) {
        recheck = true;
        return;
      }
      checking = settled()
        .then((stop) => {
          if (stop) finish();
        })
        .catch((error: unknown) => {
          finish();
          reject(error);
        })
        .finally(() => {
          checking = null;
          if (recheck && !done) {
            recheck = false;
            check();
          }
        });
    };
    const settled = async (): Promise<boolean> => {
      const row = await store.getRun(runId);
      if (done) return true;
      if (!row) {
        reject(new BatonError(createFailure('run.not_found', `Run ${quoteId(runId)} does not exist`)));
        return true;
      }
      // Durable and current: a live run may already have moved on (e.g. a decision
      // committed before a crash is being resumed) without that move being committed yet.
      const current = ctx.liveStatus(runId);
      // An executing run whose call asks a person in flight waits for a human too.
      if (row.status === 'executing' && (current === undefined || current === 'executing')) {
        const question = await pendingInputRow(store, row);
        if (done) return true;
        if (!question) return false;
        resolve(await withTree(store, row, toRun(row, question)));
        return true;
      }
      if (!SETTLED.has(row.status) || (current !== undefined && current !== row.status)) return false;
      // Waiting in the file but due (a decision to apply, a deadline passed): about to move.
      const due = row.status === 'waiting_human' && row.wake_at !== null && row.wake_at <= Date.now();
      if (due && current === undefined) return false;
      // Loaded here to apply its wait's expiry, which has not committed yet: about to move too.
      if (due && (await expiring(store, row))) return false;
      const pending = await pendingInputRow(store, row);
      const run = await withTree(store, row, toRun(row, pending));
      if (done) return true;
      // Waiting on a child run is no wait for a person until one is asked down the tree.
      if (run.childWait && !run.childWait.asking) return false;
      // Nor is waiting on a call's work elsewhere (a task): a poll ends it.
      if (run.status === 'waiting_human' && run.waitReason === 'task') return false;
      // Moved on here while this was read (an expiry or a decision applied): not what the file said.
      const now = ctx.liveStatus(runId);
      if (now !== undefined && now !== row.status) return false;
      resolve(run);
      return true;
    };
    const finish = () => {
      done = true;
      clearInterval(poll);
      unsubscribe();
      unsubscribeFailure();
      unsubscribeQuestion();
      ctx.onClose.delete(closing);
    };
    const closing = () => {
      finish();
      reject(new BatonError(createFailure('run.closed', `The runtime closed while waiting for run '${runId}'`)));
    };
    const unsubscribe = hub.onStatus(runId, (status) => {
      if (SETTLED.has(status)) check();
    });
    const unsubscribeFailure = hub.onFailure(runId, (failure) => {
      finish();
      reject(new BatonError(failure));
    });
    const unsubscribeQuestion = hub.onQuestion(runId, check);
    if (ctx.isClosed()) closing();
    else {
      ctx.onClose.add(closing);
      check();
      // A run another process drives may move without a word reaching this one: look now and then.
      // Not unref'd: a caller awaiting the run keeps its process alive until it settles (or
      // the runtime closes), as it would awaiting a run driven here.
      poll = setInterval(() => {
        if (ctx.liveStatus(runId) === undefined) check();
      }, WAITING_POLL_MS);
    }
  });
}
