/** When a waiting run must be loaded again. */
import { deadlineToArm } from '../../../machines/run-status.js';
import type { RunContext } from '../../../machines/types.js';
import type { ApprovalRow } from '../../store/index.js';

/**
 * When a waiting run must be loaded again: its deadline (unless a person is deciding about it),
 * the earliest durable delay of a variant (`context.timers`), or the instant its pending wait
 * expires, whichever comes first; null for never.
 */
export function wakeAtOf(context: RunContext, approvals?: ReadonlyMap<string, ApprovalRow>): number | null {
  const timers = (context as RunContext & { timers?: Record<string, number> }).timers ?? {};
  const pending = context.pendingApprovalId ? approvals?.get(context.pendingApprovalId) : undefined;
  const expiresAt = pending?.status === 'pending' ? pending.expires_at : null;
  const instants = [deadlineToArm(context), expiresAt, ...Object.values(timers)].filter(
    (at): at is number => typeof at === 'number',
  );
  return instants.length === 0 ? null : Math.min(...instants);
}
