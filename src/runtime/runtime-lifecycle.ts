/**
 * A runtime's start and end. Starting: once the database is open, the runs in flight are
 * resumed (unless `recover: false`), then the runtime starts sharing the database (leases
 * renewed, runs claimed, notifications heard). Closing: everything that could still write stops
 * before the store closes, in an order that keeps each step's writes ahead of the next.
 */
import { toFailure } from '../failure.js';
import type { AgentSet, OpenedStore, Store } from '../store/index.js';
import { DEFAULTS } from '../defaults.js';
import { retireOwner } from './drive/leases.js';
import type { RuntimeEnv } from './drive/env.js';
import type { Scheduling } from './registry/schedules.js';
import type { EventHub } from './model/event-hub.js';
import type { RunTracer } from './observe/otel.js';
import type { RunRegistry } from './registry/run-registry.js';
import type { Pruning } from './retention/pruning.js';
import type { RuntimeHealth, RuntimeOptions, RuntimeStats } from './runtime-api.js';
import { startSharing, type Sharing } from './sharing/sharing.js';

/** What starting needs from its runtime. */
export interface StartUpDeps {
  opening: OpenedStore;
  hub: EventHub;
  registry: RunRegistry;
  env: Pick<RuntimeEnv, 'limiter'>;
  /** The runtime's schedules: a runtime that claims runs ticks them. */
  scheduling: Pick<Scheduling, 'start' | 'stop'>;
  owner: string;
  leaseMs: number;
  /** False for an API-only runtime: it neither recovers nor claims. */
  drive: boolean;
  /** The agents the runtime drives (an `AgentSet`): a worker claims their runs only. */
  agents: AgentSet;
  isClosed(): boolean;
  /** The runtime's own `recover()`. */
  recover(): Promise<unknown>;
}

/** A runtime being started: `ready` as `Runtime.ready` says, and the sharing it starts (stopped as a whole). */
export interface StartUp extends Sharing {
  readonly ready: Promise<void>;
}

/** Starts a runtime once its database is open; a runtime closed meanwhile starts nothing more. */
export function startUp(options: RuntimeOptions, deps: StartUpDeps): StartUp {
  const { store, opened } = deps.opening;
  const { drive, leaseMs } = deps;
  const claim = drive && (options.claim ?? options.recover !== false);
  // Leases renewed, runs claimed, notifications heard: from the moment the database is open.
  let sharing: Sharing = { stop: () => undefined, claimRounds: 0 };
  const ready: Promise<void> = opened.then(async () => {
    if (deps.isClosed()) return;
    if (drive && options.recover !== false) await deps.recover();
    if (deps.isClosed()) return;
    sharing = startSharing({
      store,
      hub: deps.hub,
      registry: deps.registry,
      owner: deps.owner,
      leaseMs,
      claim,
      claimEveryMs: options.claimEveryMs ?? (store.dialect === 'postgres' ? 1_000 : leaseMs / 3),
      maxRuns: options.maxRuns ?? 1_000,
      throttled: () => deps.env.limiter.waiting(),
      agents: deps.agents,
      onError: (failure, where) => options.onError?.(failure, where),
    });
    if (claim) deps.scheduling.start();
  });
  // Whoever awaits `ready` sees a failure; nobody else has to.
  ready.catch(() => undefined);
  return {
    ready,
    stop: () => {
      sharing.stop();
      deps.scheduling.stop();
    },
    get claimRounds() {
      return sharing.claimRounds;
    },
  };
}

/** What closing stops, in its order. */
export interface CloseDeps {
  opening: OpenedStore;
  owner: string;
  sharing: Pick<Sharing, 'stop'>;
  pruning: Pick<Pruning, 'stop'>;
  tracer: Pick<RunTracer, 'drain'> | null;
  registry: Pick<RunRegistry, 'close'>;
  env: Pick<RuntimeEnv, 'limiter'>;
  /** Callers blocked in `wait()` or `events()`, released before the store closes. */
  onClose: Set<() => void>;
  onError: RuntimeOptions['onError'];
}

/** Stops every run (in-flight tools are aborted) and closes the store; runs resume on the next open. */
export async function closeRuntime(deps: CloseDeps): Promise<void> {
  const { store, sqlite, opened } = deps.opening;
  deps.sharing.stop();
  // Prunes under way stop between batches, before the store closes under them.
  await deps.pruning.stop();
  await deps.tracer?.drain();
  deps.registry.close();
  for (const release of deps.onClose) release();
  deps.onClose.clear();
  await Promise.resolve();
  sqlite?.queue.flushNow();
  // Leases not released (the database refuses writes) lapse by themselves; a database that
  // never opened holds none (its failure is the caller's already, from `ready`).
  if (
    await opened.then(
      () => true,
      () => false,
    )
  ) {
    await store
      .releaseLeases(deps.owner)
      .catch((error: unknown) => deps.onError?.(toFailure(error), { activity: 'releasing leases on close' }));
    // The limit slots of calls cut off by the close: free now rather than when their leases lapse.
    await deps.env.limiter
      .close()
      .catch((error: unknown) => deps.onError?.(toFailure(error), { activity: 'releasing limit slots on close' }));
  }
  retireOwner(deps.owner);
  await store.close();
}

/** A runtime's health: degraded while a run's commit is stalled or the database refuses writes. */
export function healthOf(
  registry: Pick<RunRegistry, 'stalledRuns'>,
  store: Pick<Store, 'writeFailure'>,
): RuntimeHealth {
  const stalledRuns = registry.stalledRuns();
  const refused = store.writeFailure;
  const writeFailure =
    refused && Date.now() - refused.last < DEFAULTS.writeFailureHealthMs
      ? { failure: refused.failure, since: refused.since }
      : null;
  return { status: stalledRuns.length > 0 || writeFailure ? 'degraded' : 'ok', stalledRuns, writeFailure };
}

/** A runtime's counters. */
export function statsOf(
  registry: Pick<RunRegistry, 'size' | 'wakeTimers'>,
  store: Pick<Store, 'commits'>,
  started: Pick<Sharing, 'claimRounds'>,
): RuntimeStats {
  return {
    commits: store.commits,
    liveRuns: registry.size,
    wakeTimers: registry.wakeTimers,
    claimRounds: started.claimRounds,
  };
}
