/** The events waiting for one SSE client: bounded, so a client that stops reading cannot grow the server without end. */
import type { RunEventRecord } from '../../index.js';

/** A bounded FIFO with one consumer; `overflowed` once more than `limit` events waited. */
export function createEventQueue(limit: number) {
  const items: RunEventRecord[] = [];
  let wake: (() => void) | undefined;
  let stopped = false;
  const queue = {
    overflowed: false,
    push(event: RunEventRecord): void {
      if (queue.overflowed || stopped) return;
      if (items.length >= limit) {
        queue.overflowed = true;
        items.length = 0;
      } else {
        items.push(event);
      }
      wake?.();
    },
    /** Ends `next()`: it answers undefined from now on. */
    stop(): void {
      stopped = true;
      wake?.();
    },
    /** The next event, or undefined once stopped or overflowed. */
    async next(): Promise<RunEventRecord | undefined> {
      while (items.length === 0 && !queue.overflowed && !stopped) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (stopped || queue.overflowed) return undefined;
      return items.shift();
    },
  };
  return queue;
}

export type EventQueue = ReturnType<typeof createEventQueue>;
