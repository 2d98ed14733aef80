/** Counting turns of the event loop: a chain of `setImmediate` callbacks, one a turn, until stopped. */
export function turnCounter(): { stop(): number } {
  let turns = 0;
  let on = true;
  const tick = () => {
    turns += 1;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    /** Stops counting; returns the turns taken since the counter started. */
    stop(): number {
      on = false;
      return turns;
    },
  };
}
