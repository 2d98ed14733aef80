/**
 * Runs whose commit failed, picked up again from the file (and so resumed from their last
 * commit). A write the database refused (a full disk, a lost connection) is tried again with
 * backoff until it lands; any other failure a few times in a row at most; a run another runtime
 * wrote (a version conflict) is given up at once, since that runtime owns it now. A run is listed
 * in `stalledRuns()` from its first failed commit until one of its commits lands.
 */
import { DEFAULTS } from '../../defaults.js';
import { toFailure, type Failure } from '../../failure.js';
import { isWriteFailure, toWriteError } from '../../store/index.js';

/** How often in a row a run whose commit failed for another reason than a refused write is picked up again. */
const MAX_READOPTIONS = 3;

/** A run this runtime picks up again after a failed commit: what failed, how often, and when it tries next. */
export interface StalledRun {
  runId: string;
  failure: Failure;
  /** Failed commits in a row (the first included). */
  attempts: number;
  /** When the first of them failed (epoch ms). */
  since: number;
  /** When the run is tried again (epoch ms). */
  retryAt: number;
}

/** What retrying needs from the registry. */
export interface StallRetryDeps {
  /** Loads the run from the file and drives it; undefined when there is nothing to drive here (ended, live, held elsewhere). */
  resume(runId: string): Promise<{ flush(): Promise<void> } | undefined>;
  /** A run that cannot be picked up again here. */
  giveUp(runId: string, failure: Failure): void;
  isClosed(): boolean;
}

/** Creates the retry of one registry's stalled runs. */
export function createStallRetry(deps: StallRetryDeps) {
  const stalled = new Map<string, StalledRun>();
  const timers = new Set<NodeJS.Timeout>();

  /** The run's commit failed with `failure`: pick it up again (after a backoff for a refused write), or give it up. */
  function readopt(runId: string, failure: Failure): void {
    const previous = stalled.get(runId);
    const attempts = (previous?.attempts ?? 0) + 1;
    const transient = isWriteFailure(failure);
    if (failure.code === 'run.version_conflict' || (!transient && attempts > MAX_READOPTIONS)) {
      stalled.delete(runId);
      deps.giveUp(runId, failure);
      return;
    }
    const delay = transient ? Math.min(DEFAULTS.writeRetryMs * 2 ** (attempts - 1), DEFAULTS.writeRetryMaxMs) : 0;
    const entry: StalledRun = {
      runId,
      failure,
      attempts,
      since: previous?.since ?? Date.now(),
      retryAt: Date.now() + delay,
    };
    stalled.set(runId, entry);
    const retry = async (): Promise<void> => {
      if (deps.isClosed() || stalled.get(runId) !== entry) return;
      try {
        const driver = await deps.resume(runId);
        if (!driver) {
          stalled.delete(runId);
          return;
        }
        // The claim was a write that landed; the run is back once its next commit does too.
        driver.flush().then(
          () => {
            if (stalled.get(runId) === entry) stalled.delete(runId);
          },
          () => undefined,
        );
      } catch (error) {
        if (stalled.get(runId) === entry) readopt(runId, toFailure(toWriteError(error), 'store.checkpoint_failed'));
      }
    };
    if (delay === 0) {
      setImmediate(() => void retry());
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      void retry();
    }, delay);
    timer.unref();
    timers.add(timer);
  }

  return {
    readopt,
    /** The run ended or was driven to a commit: it is no longer stalled. */
    clear(runId: string): void {
      stalled.delete(runId);
    },
    /** The stalled runs, oldest first. */
    stalledRuns(): StalledRun[] {
      return [...stalled.values()].map((entry) => ({ ...entry }));
    },
    close(): void {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      stalled.clear();
    },
  };
}
