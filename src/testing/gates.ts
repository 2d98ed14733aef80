/**
 * Gates: the harness holds each actor of a run at its start and lets it go on command, so a
 * test decides exactly when every event is produced (and can restart the runtime in between).
 */
import type { RuntimeHooks } from '../runtime/drive/env.js';

/** One actor waiting at its gate. */
export interface GateHit {
  actor: 'planner' | 'executor';
  runId: string;
  stepIndex: number;
  release(): void;
}

/** A set of gates that queues every actor start (of the runs `holds` names) until the harness takes it. */
export function createGates(holds: (runId: string) => boolean = () => true) {
  const waiting: GateHit[] = [];
  let notify: (() => void) | undefined;
  const hooks: RuntimeHooks = {
    beforeActor({ actor, runId, stepIndex, signal }) {
      if (!holds(runId)) return;
      return new Promise<void>((resolve, reject) => {
        const hit: GateHit = { actor, runId, stepIndex, release: resolve };
        signal.addEventListener(
          'abort',
          () => {
            const at = waiting.indexOf(hit);
            if (at >= 0) waiting.splice(at, 1);
            reject(new Error(`${actor} of step ${stepIndex} was aborted at its gate`));
          },
          { once: true },
        );
        waiting.push(hit);
        notify?.();
      });
    },
  };
  return {
    hooks,
    /** Resolves with the next actor that reaches its gate (oldest first). */
    async next(timeoutMs = 5_000): Promise<GateHit> {
      const deadline = Date.now() + timeoutMs;
      while (waiting.length === 0) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`No actor reached its gate within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          notify = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        notify = undefined;
      }
      return waiting.shift()!;
    },
    /** How many actors are held right now. */
    get held(): number {
      return waiting.length;
    },
    /** Drops every held actor (they are aborted when their runtime closes). */
    clear(): void {
      waiting.length = 0;
    },
  };
}

export type Gates = ReturnType<typeof createGates>;
