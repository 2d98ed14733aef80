/** Live delivery of committed events. Rows first, frames second: only committed events are published. */
import type { Failure } from '../failure.js';
import type { RunEventRecord } from './types.js';

type Listener = (event: RunEventRecord) => void;
type StatusListener = (status: string) => void;
type FailureListener = (failure: Failure) => void;

/** Fan-out of committed events to per-run and global listeners. */
export function createEventHub() {
  const byRun = new Map<string, Set<Listener>>();
  const all = new Set<Listener>();
  const failures = new Map<string, Set<FailureListener>>();
  const statuses = new Map<string, Set<StatusListener>>();
  const tellStatus = (runId: string, status: string) => {
    for (const listener of statuses.get(runId) ?? []) listener(status);
  };
  return {
    /**
     * Listens for the statuses a run's committed transitions reach (from its `state` events here,
     * or from another process's notification); returns the unsubscribe function.
     */
    onStatus(runId: string, listener: StatusListener): () => void {
      let set = statuses.get(runId);
      if (!set) statuses.set(runId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) statuses.delete(runId);
      };
    },
    /** A status another process committed for a run (no events read). */
    publishStatus(runId: string, status: string): void {
      tellStatus(runId, status);
    },
    /** True when anyone waits on this run's status. */
    watchingStatus(runId: string): boolean {
      return statuses.has(runId);
    },
    /** Tells whoever follows a run that this runtime can no longer drive it. */
    fail(runId: string, failure: Failure): void {
      for (const listener of failures.get(runId) ?? []) listener(failure);
    },
    /** Listens for `fail` on one run; returns the unsubscribe function. */
    onFailure(runId: string, listener: FailureListener): () => void {
      let set = failures.get(runId);
      if (!set) failures.set(runId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) failures.delete(runId);
      };
    },
    publish(events: readonly RunEventRecord[]): void {
      for (const event of events) {
        for (const listener of byRun.get(event.runId) ?? []) listener(event);
        for (const listener of all) listener(event);
        if (event.type === 'state') tellStatus(event.runId, String(event.data.to));
      }
    },
    /** True when anyone listens to this run's events (or to every run's). */
    listening(runId: string): boolean {
      return all.size > 0 || byRun.has(runId);
    },
    /** Listens to one run (or every run with `null`); returns the unsubscribe function. */
    subscribe(runId: string | null, listener: Listener): () => void {
      if (runId === null) {
        all.add(listener);
        return () => all.delete(listener);
      }
      let set = byRun.get(runId);
      if (!set) byRun.set(runId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) byRun.delete(runId);
      };
    },
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
