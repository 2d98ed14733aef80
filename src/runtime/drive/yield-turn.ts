/**
 * Sharing the event loop. Steps of runs whose planner and tools answer at once chain through
 * microtasks and would never let the loop turn (no commit, no I/O, no other run) until they end.
 * A step yields a turn when its run has taken `YIELD_EVERY_STEPS` steps since its last one, or,
 * from a run's third step on, when the process has worked `SLICE_MS` without a turn; otherwise
 * it goes on at once. So a short run (a tool step and an answer) still commits as one unit,
 * whatever the machine's load, and long or many runs share the loop.
 */

/** Steps a run takes between two turns of the event loop, at most. */
export const YIELD_EVERY_STEPS = 8;
/** Work without a turn of the event loop after which the next step yields. */
export const SLICE_MS = 25;

let sliceStartedAt: number | null = null;

/** Resolves on the next turn of the event loop when this step should yield, at once (a microtask) otherwise. */
export function stepTurn(stepIndex: number): Promise<void> {
  const now = performance.now();
  if (sliceStartedAt === null) {
    sliceStartedAt = now;
    // Runs at the next turn, whoever causes it: the slice starts over then.
    setImmediate(() => (sliceStartedAt = null));
  }
  const due =
    (stepIndex > 0 && stepIndex % YIELD_EVERY_STEPS === 0) || (stepIndex >= 2 && now - sliceStartedAt >= SLICE_MS);
  return due ? new Promise((resolve) => setImmediate(resolve)) : Promise.resolve();
}

/** `start()` calls let through per turn of the event loop; the rest wait their turn, in order. */
export const STARTS_PER_TURN = 64;

const queued: (() => void)[] = [];
let admitted = 0;
let turnScheduled = false;

function nextTurn(): void {
  turnScheduled = false;
  const batch = queued.splice(0, STARTS_PER_TURN);
  admitted = batch.length;
  for (const go of batch) go();
  if (queued.length > 0 || admitted > 0) scheduleTurn();
}

function scheduleTurn(): void {
  if (turnScheduled) return;
  turnScheduled = true;
  setImmediate(nextTurn);
}

/**
 * Admission of a `start()`: at once while fewer than `STARTS_PER_TURN` were let through this
 * turn, else on a later turn, first come first served. A burst of thousands of starts is so
 * spread over turns instead of building every run in the one the caller made the calls in.
 */
export function admitStart(): Promise<void> {
  if (admitted < STARTS_PER_TURN && queued.length === 0) {
    admitted += 1;
    scheduleTurn();
    return Promise.resolve();
  }
  scheduleTurn();
  return new Promise((resolve) => queued.push(resolve));
}
