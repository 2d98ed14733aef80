/** The `deadline` actor: arms a timer for the run's absolute deadline, re-armed on every restore. */
import { fromCallback } from 'xstate';
import type { DeadlineActorInput, RunEvent } from '../../machines/types.js';

/** Sends `timeout` at the deadline, in slices short enough for `setTimeout`. */
export const deadlineActor = fromCallback<RunEvent, DeadlineActorInput>(({ input, sendBack }) => {
  if (input.deadlineAt === null) return undefined;
  const deadlineAt = input.deadlineAt;
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = deadlineAt - Date.now();
    if (left <= 0) sendBack({ type: 'timeout' });
    else timer = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
  };
  arm();
  return () => clearTimeout(timer);
});
