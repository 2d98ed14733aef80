/**
 * Cancels asked of a run by a runtime that does not drive it. The request (`{"reason","at"}`
 * JSON) is stored on the run; the runtime that drives it carries it out when notified, at its
 * next lease renewal, or when it takes the run over.
 */
import { TERMINAL_STATUSES } from '../../../machines/types.js';
import type { Store } from '../../store/index.js';
import type { RunDriver } from '../drive/run-driver.js';
import type { Run } from '../model/types.js';

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** A cancel request as stored on the run (`compensate`: undo the run's completed calls first). */
export function cancelRequest(reason: string | undefined, compensate = false): string {
  return JSON.stringify({ reason: reason ?? null, at: Date.now(), ...(compensate ? { compensate: true } : {}) });
}

/** Cancels a run driven here as `cancel()` would, if its state still takes it. */
export function carryOutCancel(driver: RunDriver, request: string): void {
  if (driver.retired) return;
  let reason: string | undefined;
  let compensate = false;
  try {
    const parsed = JSON.parse(request) as { reason?: string | null; compensate?: boolean };
    reason = parsed.reason ?? undefined;
    compensate = parsed.compensate === true;
  } catch {
    reason = undefined;
  }
  const event = { type: 'cancel' as const, ...(reason ? { reason } : {}), ...(compensate ? { compensate } : {}) };
  if (!driver.actor.getSnapshot().can(event)) return;
  driver.actor.send(event);
  driver.flush().catch(() => undefined);
}

/**
 * Cancels a run another runtime drives: the request is stored on the run and that runtime carries
 * it out (notified at once on PostgreSQL, at its next lease renewal otherwise; one that takes the
 * run over does on resume). Resolves with the run once it has ended, or as it is after two leases.
 */
export async function cancelElsewhere(
  runId: string,
  opts: { reason?: string | undefined; compensate?: boolean | undefined },
  ctx: { store: Store; leaseMs: number; get(runId: string): Promise<Run>; isClosed(): boolean },
): Promise<Run> {
  if (!(await ctx.store.requestCancel(runId, cancelRequest(opts.reason, opts.compensate)))) return ctx.get(runId);
  const deadline = Date.now() + 2 * ctx.leaseMs;
  for (;;) {
    const run = await ctx.get(runId);
    if (TERMINAL.has(run.status) || Date.now() > deadline || ctx.isClosed()) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
