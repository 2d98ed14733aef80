/**
 * A worker's claim loop: every `everyMs`, and at once when another process says runs need
 * driving (a notification), it claims runs in flight that no one holds or whose lease lapsed —
 * a batch at a time, up to the runs it may still take — and drives them. A full batch is
 * followed by another on the next turn, so a backlog drains without waiting for the timer.
 * Invariant: one round at a time; a poke during a round starts one more right after it.
 */
import type { AgentSet, Claim, Store } from '../../store/index.js';

/** Runs claimed per round. */
const CLAIM_BATCH = 50;

/** What the loop needs from its runtime. */
export interface ClaimLoopDeps {
  store: Store;
  owner: string;
  leaseMs: number;
  everyMs: number;
  /** The agents whose runs are claimed (an `AgentSet`; no other agent's). */
  agents: AgentSet;
  /** How many more runs this runtime may drive now. */
  room(): number;
  /** Drives a claimed run. */
  adopt(claim: Claim): Promise<void>;
  /** Work done before each round's claims (moving session queues that no run's end handed on). */
  beforeRound?(): Promise<unknown>;
  /** Told of a round that failed (it is tried again on the next tick). */
  onError?(error: unknown): void;
}

/** Starts the loop; returns `poke` (claim now) and `stop`. */
export function startClaimLoop(deps: ClaimLoopDeps) {
  let stopped = false;
  let running = false;
  let again = false;
  let rounds = 0;

  async function round(): Promise<void> {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await deps.beforeRound?.();
      for (;;) {
        again = false;
        const room = Math.min(CLAIM_BATCH, deps.room());
        if (room <= 0 || stopped) break;
        const claims = await deps.store.claimRuns(deps.owner, deps.leaseMs, room, deps.agents);
        rounds += 1;
        await Promise.all(claims.map((claim) => deps.adopt(claim)));
        if (claims.length < room && !again) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      // The database away for a moment: the next tick tries again.
      if (!stopped) deps.onError?.(error);
    } finally {
      running = false;
    }
  }

  const timer = setInterval(() => void round(), deps.everyMs);
  timer.unref();
  void round();
  return {
    poke(): void {
      void round();
    },
    /** Claim statements run so far (for tests and monitoring). */
    get rounds(): number {
      return rounds;
    },
    stop(): void {
      stopped = true;
      clearInterval(timer);
    },
  };
}
