/**
 * Group commit. Writes queued during one turn of the event loop share a single transaction,
 * so concurrent runs share one fsync instead of queueing one each. Each writer's work runs in
 * its own savepoint: one writer's conflict rolls back only its own writes.
 *
 * Invariant: a writer's promise resolves only after the COMMIT that made its writes durable.
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

/** Creates a group-commit queue over one database handle. */
export function createCommitQueue(sqlite: SQLite.Database): CommitQueue {
  let queue: Pending[] = [];
  let scheduled = false;
  let commits = 0;
  let savepoint = 0;

  function flushNow(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    try {
      sqlite.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    for (const item of batch) {
      const name = `w${(savepoint = (savepoint + 1) % 1_000_000)}`;
      sqlite.exec(`SAVEPOINT ${name}`);
      try {
        item.value = item.work();
        sqlite.exec(`RELEASE ${name}`);
      } catch (error) {
        sqlite.exec(`ROLLBACK TO ${name}`);
        sqlite.exec(`RELEASE ${name}`);
        item.failed = true;
        item.error = error;
      }
    }
    try {
      sqlite.exec('COMMIT');
      commits += 1;
    } catch (error) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      for (const item of batch) item.reject(error);
      return;
    }
    for (const item of batch) {
      if (item.failed) item.reject(item.error);
      else item.resolve(item.value);
    }
  }

  return {
    write<T>(work: Work<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flushNow);
        }
      });
    },
    get commits() {
      return commits;
    },
    flushNow,
  };
}
