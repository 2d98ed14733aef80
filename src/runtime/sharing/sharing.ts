/**
 * A runtime among others on one database. A worker claims the runs no live runtime holds
 * (`claim-loop.ts`) and wakes at once when another process says runs need driving; every
 * runtime relays the events other processes commit (PostgreSQL notifications, sent after each
 * commit) to its own listeners, so `events()`, `wait()` and `watch()` see a run driven
 * elsewhere live. Polling stays the fallback when a notification is missed.
 */
import { toFailure, type Failure } from '../../failure.js';
import type { BackgroundErrorContext } from '../registry/run-registry.js';
import type { AgentSet, Store, StoreNote } from '../../store/index.js';
import { startClaimLoop } from './claim-loop.js';
import { moveOrphanQueues } from '../registry/session-queue.js';
import { startHeartbeat } from '../drive/leases.js';
import type { EventHub } from '../model/event-hub.js';
import type { RunRegistry } from '../registry/run-registry.js';
import { toEvent } from '../model/rows.js';

/** What sharing needs from its runtime. */
export interface SharingDeps {
  store: Store;
  hub: EventHub;
  registry: RunRegistry;
  owner: string;
  leaseMs: number;
  /** Claim runs (a worker); false for a runtime that only drives what it starts or acts on. */
  claim: boolean;
  claimEveryMs: number;
  maxRuns: number;
  /** Runs held here whose call waits at a limit: they leave room for others (`drive/limiter.ts`). */
  throttled: () => number;
  /** The agents the runtime drives (an `AgentSet`): a worker claims their runs only. */
  agents: AgentSet;
  /** Told of what failed in the background (a renewal, a claim round, a relayed notification). */
  onError(failure: Failure, where: BackgroundErrorContext): void;
}

/** What `startSharing` returns: how to stop it, and how many claim rounds it has run. */
export interface Sharing {
  stop(): void;
  /** Claim statements run so far by a worker's loop (0 for a runtime that does not claim). */
  readonly claimRounds: number;
}

/** Starts renewing leases, claiming (if a worker) and listening. */
export function startSharing(deps: SharingDeps): Sharing {
  const { store, hub, registry } = deps;
  const stopHeartbeat = startHeartbeat(
    store,
    deps.owner,
    deps.leaseMs,
    () => registry.liveIds(),
    registry.lose,
    registry.asked,
    (error) => deps.onError(toFailure(error), { activity: 'renewing leases' }),
  );
  const loop = deps.claim
    ? startClaimLoop({
        store,
        owner: deps.owner,
        leaseMs: deps.leaseMs,
        everyMs: deps.claimEveryMs,
        agents: deps.agents,
        room: () => deps.maxRuns - (registry.size - deps.throttled()),
        adopt: (claim) => registry.adopt(claim),
        beforeRound: () => moveOrphanQueues(store),
        onError: (error) => deps.onError(toFailure(error), { activity: 'claiming runs' }),
      })
    : null;
  /** The last seq relayed per run, so a range notified twice is published once. */
  const relayed = new Map<string, number>();

  async function relay(note: Extract<StoreNote, { kind: 'events' }>): Promise<void> {
    // Events of a run driven here are published by its driver already.
    if (registry.has(note.runId)) return;
    if (!hub.listening(note.runId)) {
      // Only waiters: the status the notification carries is all they need.
      if (note.status) hub.publishStatus(note.runId, note.status);
      return;
    }
    const after = Math.max(relayed.get(note.runId) ?? 0, note.from - 1);
    if (after >= note.to) return;
    const rows = await store.listEvents(note.runId, after, note.to - after);
    if (rows.length === 0) return;
    relayed.delete(note.runId);
    relayed.set(note.runId, rows.at(-1)!.seq);
    // Bounded: the oldest runs are forgotten first (a gap only sends a follower to the log).
    if (relayed.size > 10_000) relayed.delete(relayed.keys().next().value!);
    hub.publish(rows.map(toEvent));
  }

  const unlisten = store.listen((note) => {
    if (note.kind === 'events') {
      void relay(note).catch((error: unknown) =>
        deps.onError(toFailure(error), { activity: 'relaying events of another process', runId: note.runId }),
      );
      return;
    }
    if (note.kind === 'cancel') {
      if (!registry.has(note.runId)) return;
      void store
        .getRun(note.runId)
        .then((row) => row && registry.asked(row))
        .catch(() => undefined);
      return;
    }
    // Runs to drive (or notes that may have been missed): claim and wake at once.
    loop?.poke();
    if (deps.claim) registry.pokeWake();
  });
  return {
    get claimRounds(): number {
      return loop?.rounds ?? 0;
    },
    stop(): void {
      stopHeartbeat();
      loop?.stop();
      unlisten();
    },
  };
}
