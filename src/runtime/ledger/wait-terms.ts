/**
 * When a human wait expires and what happens then: the first of the tool's (or the policy's, or
 * the question's) `expiresIn` and the run's default, stored with the wait as an instant so a
 * restart neither loses nor extends it.
 */
import type { OnExpire, WaitExpiryOptions } from '../model/types.js';
import type { WaitExpiry } from './ledger.js';

/** The expiry of a wait created at `now`: the most specific terms that set `expiresIn`, else none. */
export function expiryOf(now: number, ...terms: (WaitExpiryOptions | undefined)[]): WaitExpiry | null {
  const chosen = terms.find((t) => t?.expiresIn !== undefined);
  if (!chosen) return null;
  const onExpire: OnExpire = chosen.onExpire ?? terms.find((t) => t?.onExpire !== undefined)?.onExpire ?? 'reject';
  return {
    at: now + chosen.expiresIn!,
    ...(typeof onExpire === 'string'
      ? { outcome: onExpire }
      : { outcome: 'escalate' as const, role: onExpire.escalate }),
  };
}

/** The run's own expiry terms, from its stored options (those it was started with). */
export function runWaitTerms(options: unknown): WaitExpiryOptions | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  const { expiresIn, onExpire } = options as WaitExpiryOptions;
  if (expiresIn === undefined && onExpire === undefined) return undefined;
  return { ...(expiresIn !== undefined ? { expiresIn } : {}), ...(onExpire !== undefined ? { onExpire } : {}) };
}
