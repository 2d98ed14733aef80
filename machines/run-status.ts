/**
 * A run's public status from its machine's state value. Baton's machine has flat states; a
 * variant may nest states inside one of the six (a review inside `waiting_human`), and its
 * status is still the top-level state.
 */
import type { StateValue } from 'xstate';
import { RUN_STATUSES, TERMINAL_STATUSES, type RunContext, type RunStatus, type TerminalStatus } from './types.js';

const STATUSES: ReadonlySet<string> = new Set(RUN_STATUSES);
const TERMINAL: ReadonlySet<unknown> = new Set(TERMINAL_STATUSES);

/** The top-level state of a state value, or null when it is none of the six. */
export function topStateOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0]! : null;
}

/** True when a state value belongs to one of the six public states. */
export function isRunStateValue(value: unknown): boolean {
  const top = topStateOf(value);
  return top !== null && STATUSES.has(top);
}

/** The public status of a state value (`{ waiting_human: 'review' }` → `waiting_human`). */
export function statusOf(value: StateValue): RunStatus {
  const top = topStateOf(value);
  if (top === null || !STATUSES.has(top)) {
    throw new Error(`State ${JSON.stringify(value)} is not inside one of the six public states`);
  }
  return top as RunStatus;
}

/** True for a status a run has ended in (`succeeded`, `failed`): it will not change any more. */
export function isTerminalStatus(status: unknown): status is TerminalStatus {
  return TERMINAL.has(status);
}

/** True for the log event that ends a run: a `state` event to `succeeded` or `failed` (stored, or as JSON). */
export function isTerminalEvent(event: { type: string; data: { to?: unknown } }): boolean {
  return event.type === 'state' && isTerminalStatus(event.data.to);
}

/** A state value as a dotted path, for messages: `waiting_human.second_approval`. */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([key, child]) => (child === undefined ? key : `${key}.${stateName(child as StateValue)}`))
    .join(', ');
}

/**
 * The deadline a run's timer is armed for: none while the run waits for a person on that very
 * deadline (it passed, and a person decides: `extend` moves it, `end` ends the run). A restored
 * snapshot re-arms the timer from this, so a restart or a wake-up does not fire the passed
 * deadline a second time and end the run the person was asked about.
 */
export function deadlineToArm(context: Pick<RunContext, 'deadlineAt' | 'budgetWait'>): number | null {
  return context.budgetWait?.budget === 'timeout' ? null : context.deadlineAt;
}
