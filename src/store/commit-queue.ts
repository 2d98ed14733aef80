/**
 * Group commit. Writes queued during one turn of the event loop share a single transaction,
 * so concurrent runs share one fsync instead of queueing one each. Each writer's work runs in
 * its own savepoint: one writer's conflict rolls back only its own writes.
 *
 * Invariant: a writer's promise resolves only after the COMMIT that made its writes durable.
 * A transaction takes at most `MAX_BATCH_UNITS` writers, and once it has `MIN_TIMED_UNITS` of
 * them, at most `MAX_BATCH_MS` of work; the rest go into the next one, a turn of the event loop
 * later, so a burst of writers never holds the event loop for long and each resolves as its own
 * commit lands. (A handful of writers always share their turn's transaction, however slow.)
 */
import type SQLite from 'better-sqlite3';

/** A unit of work that runs inside the shared transaction. */
export type Work<T> = () => T;

interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Set while a savepoint succeeded; delivered once the COMMIT is durable. */
  value?: unknown;
  error?: unknown;
  failed?: boolean;
}

/** Queue of writes flushed together on the next turn of the event loop. */
export interface CommitQueue {
  /** Runs `work` inside the next shared transaction; resolves after it is durable. */
  write<T>(work: Work<T>): Promise<T>;
  /** Number of transactions committed so far (for benchmarks and tests). */
  readonly commits: number;
  /** Flushes whatever is queued now, synchronously. */
  flushNow(): void;
}

/** Most writers in one transaction. */
export const MAX_BATCH_UNITS = 64;
/** Most time spent running writers before a transaction commits… */
export const MAX_BATCH_MS = 20;
/** …once it holds this many. */
export const MIN_TIMED_UNITS = 32;

/**
 * Creates a group-commit queue over one database handle; `toError` turns what the database
 * threw into the error a writer is rejected with.
 */
export function createCommitQueue(
  sqlite: SQLite.Database,
  toError: (error: unknown) => unknown = (error) => error,
  outcomes: { failed(error: unknown): void; committed(): void } = {
    failed: () => undefined,
    committed: () => undefined,
  },
): CommitQueue {
  const queue: Pending[] = [];
  let scheduled = false;
  let commits = 0;
  // Prepared once: parsing these seven times a run was a measurable share of a sequential loop.
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const rollback = sqlite.prepare('ROLLBACK');
  const savepoint = sqlite.prepare('SAVEPOINT w');
  const release = sqlite.prepare('RELEASE w');
  const rollbackTo = sqlite.prepare('ROLLBACK TO w');

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  }

  /** One transaction of what is queued (bounded); what is left goes into the next. */
  function flush(): void {
    scheduled = false;
    commitBatch(true);
    if (queue.length > 0) schedule();
  }

  /** Commits everything queued now, in as many transactions as it takes, synchronously. */
  function flushNow(): void {
    scheduled = false;
    while (queue.length > 0) commitBatch(false);
  }

  function commitBatch(bounded: boolean): void {
    const batch = bounded ? queue.splice(0, MAX_BATCH_UNITS) : queue.splice(0, queue.length);
    if (batch.length === 0) return;
    try {
      begin.run();
    } catch (error) {
      const failed = toError(error);
      outcomes.failed(failed);
      for (const item of batch) item.reject(failed);
      return;
    }
    if (batch.length === 1) {
      if (!commitAlone(batch[0]!)) return;
    } else if (!runInSavepoints(batch, bounded)) return;
    try {
      commit.run();
      commits += 1;
    } catch (error) {
      if (sqlite.inTransaction) rollback.run();
      const failed = toError(error);
      outcomes.failed(failed);
      for (const item of batch) item.reject(failed);
      return;
    }
    outcomes.committed();
    for (const item of batch) {
      if (item.failed) item.reject(item.error);
      else item.resolve(item.value);
    }
  }

  /**
   * A transaction of one writer needs no savepoint: the transaction is its savepoint. False when
   * the writer failed and its transaction was rolled back (nothing is left to commit).
   */
  function commitAlone(item: Pending): boolean {
    try {
      item.value = item.work();
      return true;
    } catch (error) {
      if (sqlite.inTransaction) rollback.run();
      const failed = toError(error);
      outcomes.failed(failed);
      item.reject(failed);
      return false;
    }
  }

  /**
   * Runs each writer in its own savepoint, so one writer's failure rolls back only its own
   * writes. False when the database rolled the whole transaction back (every writer rejected).
   */
  function runInSavepoints(batch: Pending[], bounded: boolean): boolean {
    const started = performance.now();
    for (const [i, item] of batch.entries()) {
      if (bounded && i >= MIN_TIMED_UNITS && performance.now() - started > MAX_BATCH_MS) {
        // Out of time: the writers not run yet wait for the next transaction, first in line.
        queue.unshift(...batch.splice(i));
        break;
      }
      savepoint.run();
      try {
        item.value = item.work();
        release.run();
      } catch (error) {
        if (!sqlite.inTransaction) {
          // SQLite rolled the whole transaction back (a full disk, an I/O error): every writer of
          // it lost its writes, the ones that ran before this one too, and none of it is retried.
          const lost = toError(error);
          outcomes.failed(lost);
          for (const other of batch) other.reject(lost);
          return false;
        }
        rollbackTo.run();
        release.run();
        item.failed = true;
        item.error = toError(error);
        outcomes.failed(item.error);
      }
    }
    return true;
  }

  return {
    write<T>(work: Work<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
    get commits() {
      return commits;
    },
    flushNow,
  };
}
