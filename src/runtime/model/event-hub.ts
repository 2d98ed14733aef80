/** Live delivery of committed events. Rows first, frames second: only committed events are published. */
import type { Failure } from '../../failure.js';
import type { RunEventRecord } from './types.js';

/** Listeners of one kind, per run; a run's set goes when its last listener does. */
function perRun<T>() {
  const sets = new Map<string, Set<(value: T) => void>>();
  return {
    add(runId: string, listener: (value: T) => void): () => void {
      let set = sets.get(runId);
      if (!set) sets.set(runId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) sets.delete(runId);
      };
    },
    tell(runId: string, value: T): void {
      for (const listener of sets.get(runId) ?? []) listener(value);
    },
    has(runId: string): boolean {
      return sets.has(runId);
    },
  };
}

/** Fan-out of committed events to per-run and global listeners. */
export function createEventHub() {
  const byRun = perRun<RunEventRecord>();
  const all = new Set<(event: RunEventRecord) => void>();
  const failures = perRun<Failure>();
  const statuses = perRun<string>();
  const questions = perRun<void>();
  return {
    /** Listens for a question a call of the run asks in flight (the run stays `executing`). */
    onQuestion: questions.add,
    /** A call of the run asked a person in flight; its wait is committed. */
    publishQuestion: (runId: string) => questions.tell(runId, undefined),
    /**
     * Listens for the statuses a run's committed transitions reach (from its `state` events here,
     * or from another process's notification); returns the unsubscribe function.
     */
    onStatus: statuses.add,
    /** A status another process committed for a run (no events read). */
    publishStatus: statuses.tell,
    /** Tells whoever follows a run that this runtime can no longer drive it. */
    fail: failures.tell,
    /** Listens for `fail` on one run; returns the unsubscribe function. */
    onFailure: failures.add,
    publish(events: readonly RunEventRecord[]): void {
      for (const event of events) {
        byRun.tell(event.runId, event);
        for (const listener of all) listener(event);
        if (event.type === 'state') statuses.tell(event.runId, String(event.data.to));
      }
    },
    /** True when anyone listens to this run's events (or to every run's). */
    listening(runId: string): boolean {
      return all.size > 0 || byRun.has(runId);
    },
    /** Listens to one run (or every run with `null`); returns the unsubscribe function. */
    subscribe(runId: string | null, listener: (event: RunEventRecord) => void): () => void {
      if (runId === null) {
        all.add(listener);
        return () => all.delete(listener);
      }
      return byRun.add(runId, listener);
    },
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
