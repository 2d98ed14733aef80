/**
 * The `deadline` and `timer` actors: each arms a timer for an absolute instant stored in the
 * run's context, so restoring a snapshot re-arms it for the same instant (a restart neither
 * loses nor extends it). Instants past `setTimeout`'s range are reached in slices.
 */
import { fromCallback } from 'xstate';
import type { DeadlineActorInput, DeadlineMoved, RunEvent, TimerActorInput } from '../../../machines/types.js';

/**
 * Calls `fire` at `at` (on the next turn if it has passed); returns the disarm function. Never
 * synchronously: an instant already past when the actor starts (a run whose creation commit took
 * longer than its whole budget) would reach the machine while it is still `pending`, which takes
 * no `timeout`, and be lost; on the next turn the run has taken its `start`.
 */
function armAt(at: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = at - Date.now();
    if (left <= 0) fire();
    else timer = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
  };
  timer = setTimeout(arm, Math.max(0, Math.min(at - Date.now(), 2 ** 31 - 1)));
  return () => clearTimeout(timer);
}

/** Sends `timeout` at the run's deadline; armed again when a person moves it (`deadline_moved`). */
export const deadlineActor = fromCallback<DeadlineMoved, DeadlineActorInput>(({ input, sendBack, receive }) => {
  const arm = (at: number | null) => (at === null ? () => undefined : armAt(at, () => sendBack({ type: 'timeout' })));
  let disarm = arm(input.deadlineAt);
  receive((event) => {
    disarm();
    disarm = arm(event.deadlineAt);
  });
  return () => disarm();
});

/** Sends a variant's event at the instant its `durableDelay` stored. */
export const timerActor = fromCallback<RunEvent, TimerActorInput>(({ input, sendBack }) => {
  if (input.at === null) return undefined;
  return armAt(input.at, () => sendBack(input.event as RunEvent));
});
