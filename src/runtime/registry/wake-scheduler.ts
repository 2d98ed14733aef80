/**
 * One scheduler for every waiting run this runtime does not hold in memory: a single timer, armed
 * for the earliest `wake_at` in the index (a deadline, a variant's durable delay, or 0 for a
 * decision committed before it was applied). When it fires, the runs due are loaded in batches,
 * each batch on its own turn of the event loop; loading one re-arms what it needs (its deadline
 * actor fires at once if the deadline has passed). Invariant: no timer, no memory per waiting run
 * (but the ids of the runs parked here while their call's work elsewhere is polled, which keep
 * the timer, and so the process, alive until they are woken).
 */
import { toFailure, type Failure } from '../../failure.js';
import type { AgentSet, Store } from '../../store/index.js';

/** Runs loaded per turn of the event loop. */
const BATCH = 64;

/** What the scheduler needs from its runtime. */
export interface WakeDeps {
  store: Store;
  /** How long another runtime's claim lasts: a run it holds is not tried again sooner. */
  leaseMs: number;
  /** The agents this runtime drives (`AgentSet`): only their runs are woken here. */
  agents: AgentSet;
  /** Loads a run into this runtime (rejects when it cannot). */
  wake(runId: string): Promise<void>;
  isLive(runId: string): boolean;
  /** A run that cannot be loaded at all (another machine, a damaged row): reported, not retried. */
  report(runId: string, failure: Failure): void;
}

/** Creates the scheduler; `start()` arms it from the file. */
export function createWakeScheduler(deps: WakeDeps) {
  const { store } = deps;
  let timer: NodeJS.Timeout | undefined;
  let armedAt: number | null = null;
  let stopped = false;
  let running = false;
  let again = false;
  /** Runs another live runtime holds: not tried again before their lease can lapse. */
  const notBefore = new Map<string, number>();
  /** Runs parked here whose task this runtime polls: while there are any, the timer holds the process open. */
  const polled = new Set<string>();
  const hold = (): void => {
    if (polled.size > 0) timer?.ref();
    else timer?.unref();
  };

  function arm(at: number | null): void {
    if (stopped || at === null) return;
    if (running) {
      again = true;
      return;
    }
    if (armedAt !== null && armedAt <= at) return;
    clearTimeout(timer);
    armedAt = at;
    timer = setTimeout(() => void fire(), Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1));
    hold();
  }

  async function fire(): Promise<void> {
    timer = undefined;
    armedAt = null;
    if (stopped) return;
    running = true;
    again = false;
    let retryAt: number | null = null;
    const now = Date.now();
    /** The runs due in this pass: what `notBefore` remembers of others (decided, pruned) is forgotten after it. */
    const seen = new Set<string>();
    let complete = false;
    try {
      let after: { wakeAt: number; id: string } | null = null;
      for (;;) {
        const due = await store.dueWaitingRuns(now, after, BATCH, deps.agents);
        const waking: Promise<void>[] = [];
        for (const row of due) {
          after = { wakeAt: row.wake_at, id: row.id };
          seen.add(row.id);
          if (stopped) return;
          if (deps.isLive(row.id)) continue;
          const wait = notBefore.get(row.id);
          if (wait !== undefined && wait > now) {
            if (Number.isFinite(wait)) retryAt = Math.min(retryAt ?? wait, wait);
            continue;
          }
          waking.push(
            deps.wake(row.id).then(
              () => void notBefore.delete(row.id),
              (error: unknown) => {
                const failure = toFailure(error);
                if (failure.code === 'run.version_conflict') {
                  const at = now + deps.leaseMs;
                  notBefore.set(row.id, at);
                  retryAt = Math.min(retryAt ?? at, at);
                } else if (failure.code !== 'run.invalid_transition') {
                  notBefore.set(row.id, Number.POSITIVE_INFINITY);
                  deps.report(row.id, failure);
                }
              },
            ),
          );
        }
        await Promise.all(waking);
        if (due.length < BATCH) {
          complete = true;
          break;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch {
      // The store closed, or failed for a moment: try again within a lease's length.
      if (stopped) return;
      retryAt = now + deps.leaseMs;
    } finally {
      running = false;
    }
    if (complete) for (const id of notBefore.keys()) if (!seen.has(id)) notBefore.delete(id);
    if (stopped) return;
    const next = await store.nextWake(now, deps.agents).catch(() => null);
    const at = next === null ? retryAt : retryAt === null ? next : Math.min(next, retryAt);
    arm(again ? Date.now() : at);
  }

  return {
    /** Arms for the earliest wake-up in the file. */
    start(): void {
      void store.nextWake(-1, deps.agents).then(arm, () => undefined);
    },
    /** Something may be due now (another process decided a run): look at once. */
    poke(): void {
      arm(Date.now());
    },
    /** A run that left memory needs waking at `at` (null: never); `polledRun`: a run whose task this runtime polls. */
    consider(at: number | null, polledRun?: string): void {
      if (polledRun !== undefined && at !== null) polled.add(polledRun);
      arm(at);
      hold();
    },
    /** A run was loaded (woken here, or for a decision or a cancel): this runtime no longer waits to poll it. */
    loaded(runId: string): void {
      if (polled.delete(runId)) hold();
    },
    /** One timer at most, whatever the number of waiting runs. */
    get timers(): number {
      return timer === undefined ? 0 : 1;
    },
    /** Runs remembered as not to be tried yet (bounded by the runs due). */
    get held(): number {
      return notBefore.size;
    },
    stop(): void {
      stopped = true;
      polled.clear();
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

export type WakeScheduler = ReturnType<typeof createWakeScheduler>;
