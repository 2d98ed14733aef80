/** When a waiting run must be loaded again. */
import type { RunContext } from '../../../machines/types.js';

/**
 * When a waiting run must be loaded again: its deadline, or the earliest durable delay of a
 * variant (`context.timers`), whichever comes first; null for never.
 */
export function wakeAtOf(context: RunContext): number | null {
  const timers = (context as RunContext & { timers?: Record<string, number> }).timers ?? {};
  const instants = [context.deadlineAt, ...Object.values(timers)].filter((at): at is number => typeof at === 'number');
  return instants.length === 0 ? null : Math.min(...instants);
}
