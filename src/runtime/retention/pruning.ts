/**
 * A runtime's prunes: those asked through `prune()` and those its `retention` schedules. Each
 * waits for the database to open; all of them stop between batches when the runtime closes,
 * and `stop()` resolves only once none holds the store any more, so the store closes after them.
 */
import type { Store } from '../../store/index.js';
import { prune, scheduleRetention, type PruneOptions, type PruneReport, type RetentionOptions } from './prune.js';

/** What a runtime's prunes need from it. */
export interface PruningDeps {
  store: Store;
  /** Resolves once the database is open. */
  opened: Promise<void>;
  /** The schedule, if the runtime was given one. */
  retention: RetentionOptions | undefined;
  /** Refuses a prune asked of a closed runtime. */
  assertOpen(): void;
}

/** A runtime's prunes: `prune` starts one now, `stop` aborts them all and waits for them. */
export interface Pruning {
  prune(options: PruneOptions): Promise<PruneReport>;
  stop(): Promise<void>;
}

/** Starts the retention schedule (if any) and returns how to prune now and how to stop. */
export function createPruning({ store, opened, retention, assertOpen }: PruningDeps): Pruning {
  const closing = new AbortController();
  const prunes = new Set<Promise<unknown>>();
  function pruneNow(options: PruneOptions): Promise<PruneReport> {
    assertOpen();
    const signal = options.signal ? AbortSignal.any([options.signal, closing.signal]) : closing.signal;
    const done = opened.then(() => prune(store, { ...options, signal }));
    prunes.add(done);
    void done.catch(() => undefined).finally(() => prunes.delete(done));
    return done;
  }
  const stopRetention = retention ? scheduleRetention(pruneNow, retention) : async () => undefined;
  return {
    prune: pruneNow,
    async stop() {
      closing.abort();
      await stopRetention();
      await Promise.allSettled([...prunes]);
    },
  };
}
