/**
 * Pauses asked of a run (`pause`). The request (`{"reason","by","at"}` JSON) is stored on the run
 * first, whoever drives it: the runtime that drives it carries it into its machine at once (or
 * when notified, at its next lease renewal, or when it loads the run), and the write that enters
 * the pause takes it. The machine keeps the ask until the run's next step boundary.
 */
import type { RunDriver } from '../drive/run-driver.js';
import { parsePauseRequest } from '../model/pause-ask.js';

/** Gives a run driven here the pause asked of it, if its state still takes one (not asked, not paused, not compensating). */
export function carryOutPause(driver: RunDriver, request: string): void {
  if (driver.retired) return;
  const asked = parsePauseRequest(request);
  const event = {
    type: 'pause' as const,
    ...(asked?.reason ? { reason: asked.reason } : {}),
    ...(asked?.by ? { by: asked.by } : {}),
  };
  if (!driver.actor.getSnapshot().can(event)) return;
  driver.actor.send(event);
  driver.flush().catch(() => undefined);
}
