/**
 * One subscription to `runtime.watch` for the whole server, fanned out by run id and to the
 * global stream, so a hundred SSE clients cost the runtime one listener. It also remembers the
 * tenant of each recently seen run, for filtering the global stream.
 */
import type { Runtime, RunEventRecord } from '../../index.js';

type Listener = (event: RunEventRecord) => void;

const TENANT_CACHE = 10_000;

// A listener's bug must not reach the runtime, which publishes right after its commits.
function deliver(listener: Listener, event: RunEventRecord): void {
  try {
    listener(event);
  } catch (error) {
    console.error('baton server: an event listener failed', error);
  }
}

/** Creates the bus; it subscribes to the runtime on the first listener and lets go on `close()`. */
export function createEventBus(runtime: Runtime) {
  const byRun = new Map<string, Set<Listener>>();
  const all = new Set<Listener>();
  const tenants = new Map<string, string | null>();
  let unwatch: (() => void) | undefined;

  function ensureWatching(): void {
    unwatch ??= runtime.watch((event) => {
      for (const listener of byRun.get(event.runId) ?? []) deliver(listener, event);
      for (const listener of all) deliver(listener, event);
    });
  }

  return {
    /** Listens to one run's events; returns the unsubscribe function. */
    subscribeRun(runId: string, listener: Listener): () => void {
      ensureWatching();
      let set = byRun.get(runId);
      if (!set) byRun.set(runId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) byRun.delete(runId);
      };
    },
    /** Listens to every run's events; returns the unsubscribe function. */
    subscribeAll(listener: Listener): () => void {
      ensureWatching();
      all.add(listener);
      return () => all.delete(listener);
    },
    /** The tenant of a run (cached: a run's tenant never changes). */
    tenantOf(runId: string): string | null {
      if (tenants.has(runId)) return tenants.get(runId) ?? null;
      const tenant = runtime.get(runId).tenantId;
      if (tenants.size >= TENANT_CACHE) tenants.delete(tenants.keys().next().value!);
      tenants.set(runId, tenant);
      return tenant;
    },
    close(): void {
      unwatch?.();
      unwatch = undefined;
      byRun.clear();
      all.clear();
    },
  };
}

export type EventBus = ReturnType<typeof createEventBus>;
