/**
 * A session's queue: runs started while the session had an active run, with `onBusy: 'enqueue'`
 * or `'interrupt'`. A queued run is a row (status `queued`, no owner) and its `run.created`
 * event; its machine starts only once it is the session's turn. Invariants: the session keeps at
 * most one active run (the unique index, as ever); the write that ends the active run hands the
 * session to the head of its queue (the runs' trigger, migration 22), so a queue moves on
 * whichever process ends the run, or none crashes in between; a run enqueued just as the active
 * one ended is handed the session by its own unit (`promoteQueueHead`); a claiming runtime's
 * sweep moves any queue left with no active run. The run made `pending` is claimed like any
 * unclaimed run.
 */
import { BatonError, createFailure, fail, toFailure } from '../../failure.js';
import { isUniqueViolation, type RunRow, type Store } from '../../store/index.js';
import { endFromRow } from '../drive/quarantine.js';
import type { RunDriver } from '../drive/run-driver.js';
import type { EventHub } from '../model/event-hub.js';
import { cancelRequest } from './cancel-request.js';
import { stageCreation, type NewRun } from './new-run.js';

/** Sessions whose queues a sweep moves at most per round. */
const SWEEP_BATCH = 100;

/** The row of a run that waits its turn: queued, unclaimed; one that interrupts goes first. */
export function queuedRow(row: RunRow, interrupts: boolean): RunRow {
  return { ...row, status: 'queued', owner: null, lease_until: null, queue_order: interrupts ? 0 : row.created_at };
}

/**
 * Commits a queued run: its row, its `run.created` event (saying it was queued), the cancel of
 * the active run it interrupts (asked durably, so a crash right after still ends that run), and
 * the session handed to it at once if its active run ended meanwhile. Throws the unique
 * violation of an idempotency key taken meanwhile (the caller reads what took it).
 */
export async function commitQueued(driver: RunDriver, run: NewRun, row: RunRow, activeRunId: string | null) {
  stageCreation(driver, run, row, { queued: { on_busy: run.request.onBusy, behind: activeRunId } });
  driver.stage((writer) => {
    if (run.request.onBusy === 'interrupt' && activeRunId) {
      const { reason, compensate } = run.request.interrupt ?? {};
      writer.askCancel(activeRunId, cancelRequest(reason ?? INTERRUPTED, compensate));
    }
    writer.promoteQueueHead(run.sessionId, run.now);
  });
  await driver.flush();
}

/** Why an interrupted run was cancelled, unless the start says. */
const INTERRUPTED = 'interrupted by a newer run of its session';

/** Moves the queues that no run's end handed on (a sweep of a claiming runtime); how many moved. */
export async function moveOrphanQueues(store: Store): Promise<number> {
  let moved = 0;
  for (const sessionId of await store.orphanQueues(SWEEP_BATCH)) {
    try {
      await store.write((writer) => writer.promoteQueueHead(sessionId, Date.now()));
      moved += 1;
    } catch (error) {
      // Another process handed it on first, or started a run in it: the session is not free.
      if (!isUniqueViolation(error)) throw error;
    }
  }
  return moved;
}

/**
 * Cancels a queued run from its row: it ends `failed` (`cancelled`) without ever starting, its
 * snapshot the one it was created with. False when it left the queue meanwhile (it is `pending`
 * or further: cancel it as a started run).
 */
export async function cancelQueuedRun(store: Store, hub: EventHub, row: RunRow, reason: string | undefined) {
  const failure = createFailure('run.cancelled', `Run cancelled while queued${reason ? `: ${reason}` : ''}`);
  try {
    await endFromRow(store, hub, row, failure);
    return true;
  } catch (error) {
    if (error instanceof BatonError && error.code === 'run.version_conflict') return false;
    throw error;
  }
}

/**
 * Carries out at once the cancel a start that interrupts asked of the active run (its end hands
 * the session to the new run). The cancel is durable already: a run loaded to take it carries it
 * out as it loads, so the cancel here may find it ended or ending, and waits for that to land.
 */
export async function interruptActive(
  cancel: (runId: string, opts: { reason?: string; compensate?: boolean }) => Promise<unknown>,
  landed: (runId: string) => Promise<void>,
  activeRunId: string | null,
  opts: { reason?: string; compensate?: boolean },
): Promise<void> {
  if (!activeRunId) return;
  try {
    await cancel(activeRunId, { ...opts, reason: opts.reason ?? INTERRUPTED });
  } catch (error) {
    if (toFailure(error).code !== 'run.invalid_transition') throw error;
    await landed(activeRunId);
  }
}

/** `input.invalid` for an `interrupt` given without `onBusy: 'interrupt'`. */
export function assertInterruptTerms(onBusy: string | undefined, interrupt: unknown): void {
  if (interrupt !== undefined && onBusy !== 'interrupt') {
    fail('input.invalid', "'interrupt' applies only with onBusy: 'interrupt' (options.on_busy over HTTP)", {
      details: { on_busy: onBusy ?? null },
    });
  }
}
