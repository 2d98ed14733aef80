/**
 * The order PostgreSQL units commit in: a run's units one after another, in the order they
 * were queued, each on a later turn than its call (so a burst of transitions is one unit);
 * units of different runs concurrently over the pool. Every outcome is counted in the store's
 * write failures: a refusal noted, a commit clearing them.
 */
import type pg from 'pg';
import { BatonError, createFailure } from '../../failure.js';
import { toWriteError, type WriteFailures } from '../store-errors.js';
import type { Store } from '../store-api.js';
import { commitUnit } from './pg-commit.js';

/** The units of one store. */
export interface PgUnits {
  write: Store['write'];
  /** Transactions committed so far. */
  readonly commits: number;
  /** True once `close` was called. */
  readonly closed: boolean;
  /** Refuses new units; resolves once every unit queued so far has settled. */
  close(): Promise<void>;
}

/** Queues units on `pool`, their outcomes noted in `failures`. */
export function pgUnits(pool: pg.Pool, failures: WriteFailures): PgUnits {
  let commits = 0;
  let closed = false;
  /** The last unit queued per run: the next one commits after it. */
  const tails = new Map<string, Promise<unknown>>();
  const pending = new Set<Promise<unknown>>();
  return {
    write(work, fence) {
      if (closed) return Promise.reject(new BatonError(createFailure('run.closed', 'The store is closed')));
      const key = fence?.runId ?? '';
      const previous = tails.get(key) ?? Promise.resolve();
      // After the run's previous unit, and on a later turn, so a burst of transitions is one unit.
      const unit = previous
        .catch(() => undefined)
        .then(() => new Promise((resolve) => setImmediate(resolve)))
        .then(() =>
          commitUnit(pool, work, fence).then(
            ({ value, committed }) => {
              if (committed) commits += 1;
              failures.committed();
              return value;
            },
            (error: unknown) => {
              const failed = toWriteError(error);
              failures.failed(failed);
              throw failed;
            },
          ),
        );
      tails.set(key, unit);
      pending.add(unit);
      void unit
        .catch(() => undefined)
        .finally(() => {
          pending.delete(unit);
          if (tails.get(key) === unit) tails.delete(key);
        });
      return unit;
    },
    get commits() {
      return commits;
    },
    get closed() {
      return closed;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...pending]);
    },
  };
}
