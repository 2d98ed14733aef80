/**
 * Per-key concurrency and rate limits (docs/architecture.md §4.13), shared by every runtime on
 * the database: a call (or a planner call) passes its gates before it starts, holding a slot of
 * each concurrency limit (a lease this runtime renews every third of its length, so a crashed
 * worker's slots come back when they lapse) and taking a turn of each rate. A call over a limit
 * waits here, before its `started` row, so no call runs twice because it waited; while it waits
 * its run does not count against the runtime's `maxRuns`. A 429 backs the key off for everyone.
 */
import type { LimitTake, Store } from '../../store/index.js';
import type { ConcurrencyLimit, RateLimit, RunUserContext } from '../../tools/define-tool.js';

/** What a planner limit's key is computed from. */
export interface PlannerLimitInput {
  runId: string;
  context: RunUserContext;
  /** The agent whose planner is called. */
  agent: string;
}

/** Limits on planner calls (the model API's own limits), per key: `createRuntime({ limits: { planner } })`. */
export interface PlannerLimits {
  concurrency?: ConcurrencyLimit<PlannerLimitInput>;
  rate?: RateLimit<PlannerLimitInput>;
}

/** One limit a call must pass: a concurrency limit's slots or a rate, on one key. */
export type LimitGate = { scope: string; key: string } & (
  { kind: 'concurrency'; limit: number } | { kind: 'rate'; limit: number; intervalMs: number }
);

/** What a call is told when it must wait: which limit, on which key, and for how long at least. */
export interface Throttle {
  why: 'concurrency' | 'rate' | 'backoff';
  scope: string;
  /** The key the limit counts the call under, as its key function gave it. */
  key: string;
  /** When the call asks again (a slot freed in this process wakes it sooner). */
  waitMs: number;
}

/** The gates a call passed: give them back when it is over. */
export interface Passed {
  release(): Promise<void>;
}

/** The longest a call waiting for a slot sleeps before it asks the database again. */
const POLL_CAP_MS = 500;
const POLL_FLOOR_MS = 10;

/** Waits `ms`, or less when aborted (or woken through `wake`: a slot given back here). */
export function pause(ms: number, signal: AbortSignal, wake: Set<() => void> = new Set()): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      wake.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    wake.add(done);
  });
}

/** The limiter of one runtime. */
export interface Limiter {
  /**
   * Waits until the call passes every gate (in order), telling `onThrottle` each time it must
   * wait; null when `signal` aborted first (nothing is held then).
   */
  pass(
    gates: readonly LimitGate[],
    holder: string,
    signal: AbortSignal,
    onThrottle: (t: Throttle) => void | Promise<void>,
  ): Promise<Passed | null>;
  /** A 429 on the gates' keys: each backs off for every runtime (`retryAfterMs`, else doubled with each strike). */
  backOff(gates: readonly LimitGate[], retryAfterMs?: number): Promise<number>;
  /** A call of these keys went through after 429s: the doubling starts again. */
  cleared(gates: readonly LimitGate[]): void;
  /** Runs with a call waiting at a gate now (they do not count against `maxRuns`). */
  waiting(): number;
  /** Gives back every slot this runtime holds (it closes). */
  close(): Promise<void>;
}

/** Creates the limiter of a runtime whose owner id is `owner`. */
export function createLimiter(
  store: Store,
  owner: string,
  leaseMs: number,
  onError: (error: unknown) => void,
): Limiter {
  /** How many slots are held here: renewed while any is. */
  let held = 0;
  let renewal: NodeJS.Timeout | undefined;
  let waitingNow = 0;
  /** Waiters to wake when a slot of their key is given back here. */
  const wakers = new Map<string, Set<() => void>>();
  /** Keys whose last call had 429s: a success clears their strikes. */
  const struck = new Set<string>();
  const wakersOf = (scope: string) => {
    let set = wakers.get(scope);
    if (!set) wakers.set(scope, (set = new Set()));
    return set;
  };

  const hold = (delta: number) => {
    held += delta;
    if (held > 0 && !renewal) {
      renewal = setInterval(
        () => {
          store.renewSlots(owner, leaseMs).catch(onError);
        },
        Math.max(50, Math.floor(leaseMs / 3)),
      );
      renewal.unref();
    } else if (held === 0 && renewal) {
      clearInterval(renewal);
      renewal = undefined;
    }
  };

  async function take(gate: LimitGate, holder: string): Promise<LimitTake> {
    return gate.kind === 'concurrency'
      ? store.takeSlot(gate.scope, gate.limit, holder, owner, leaseMs)
      : store.takeRate(gate.scope, gate.limit, gate.intervalMs, holder);
  }

  async function giveBack(taken: { scope: string; slot: number }[], holder: string): Promise<void> {
    for (const { scope, slot } of taken.splice(0)) {
      hold(-1);
      try {
        await store.releaseSlot(scope, slot, holder);
      } catch (error) {
        // Not given back now: its lease lapses, since it is no longer renewed once none is held.
        onError(error);
      }
      for (const wake of [...(wakers.get(scope) ?? [])]) wake();
    }
  }

  return {
    async pass(gates, holder, signal, onThrottle) {
      const taken: { scope: string; slot: number }[] = [];
      let counted = false;
      try {
        for (const gate of gates) {
          for (let polls = 0; ; polls += 1) {
            if (signal.aborted) {
              await giveBack(taken, holder);
              return null;
            }
            const got = await take(gate, holder);
            if (got.ok) {
              // A rate's turn is never given back: it lapses an interval after it was taken.
              if (gate.kind === 'concurrency' && got.slot !== null) {
                taken.push({ scope: gate.scope, slot: got.slot });
                hold(1);
              }
              break;
            }
            if (!counted) {
              counted = true;
              waitingNow += 1;
            }
            // A slot: asked again soon (a holder here wakes it at once), backing off to the cap;
            // a rate or a back-off: at the instant it names, a little spread so waiters do not collide.
            const ms = Math.max(
              1,
              got.why === 'concurrency'
                ? Math.min(POLL_CAP_MS, POLL_FLOOR_MS * 2 ** polls)
                : got.waitMs + Math.floor(Math.random() * 20),
            );
            await onThrottle({ why: got.why, scope: gate.scope, key: gate.key, waitMs: ms });
            await pause(ms, signal, wakersOf(gate.scope));
          }
        }
      } catch (error) {
        await giveBack(taken, holder);
        throw error;
      } finally {
        if (counted) waitingNow -= 1;
      }
      return { release: () => giveBack(taken, holder) };
    },
    async backOff(gates, retryAfterMs) {
      let longest = 0;
      for (const gate of gates) {
        struck.add(gate.scope);
        longest = Math.max(longest, await store.backOffKey(gate.scope, retryAfterMs));
      }
      return longest;
    },
    cleared(gates) {
      for (const gate of gates) {
        if (!struck.delete(gate.scope)) continue;
        store.clearStrikes(gate.scope).catch(onError);
      }
    },
    waiting: () => waitingNow,
    async close() {
      if (renewal) clearInterval(renewal);
      renewal = undefined;
      held = 0;
      for (const set of wakers.values()) for (const wake of [...set]) wake();
      await store.releaseSlotsOf(owner);
    },
  };
}
