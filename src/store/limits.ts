/**
 * Per-key limits over the limit statements (`limit-statements.ts`), the same on both dialects:
 * each dialect gives how it runs a statement by name.
 */
import type { StatementName } from './statements.js';
import type { LimitSlotRow, LimitTake, StoreLimits } from './store-api.js';

/** How a dialect runs the limit statements: rows of a read or of a write's RETURNING, or a write's row count. */
export interface StatementRunner {
  rows<T>(name: StatementName, values: Record<string, unknown>): Promise<T[]>;
  exec(name: StatementName, values: Record<string, unknown>): Promise<number>;
  /** Wraps a change: a write the database refuses fails as a unit's does. */
  write<T>(change: () => Promise<T>): Promise<T>;
}

/** The owner of a rate limit's turns: no runtime, so no heartbeat renews them. */
const RATE_OWNER = '';

/** The back-off of a 429 without a retry hint: a second, doubled with each strike in a row, up to a minute. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 60_000;

interface KeyRow {
  blocked_until: number;
  strikes: number;
  now: number;
}

/** How long a key still backs off (0 when it does not). */
function backingOff(key: KeyRow | undefined): number {
  return key ? Math.max(0, Number(key.blocked_until) - Number(key.now)) : 0;
}

/** The limits of `Store` over a dialect's statements. */
export function limitsOver(db: StatementRunner): StoreLimits {
  const keyOf = async (scope: string) => (await db.rows<KeyRow>('limitKey', { scope }))[0];
  const held = (scope: string) => db.rows<LimitSlotRow & { now: number }>('heldSlots', { scope });
  /** Takes a free slot of `scope`, unless the key backs off; else how long to wait (`why` when full). */
  async function takeSlot(
    scope: string,
    limit: number,
    holder: string,
    owner: string,
    leaseMs: number,
    why: 'concurrency' | 'rate',
  ): Promise<LimitTake> {
    const blocked = backingOff(await keyOf(scope));
    if (blocked > 0) return { ok: false, waitMs: blocked, why: 'backoff' };
    const holders = await held(scope);
    const taken = new Set(holders.map((row) => Number(row.slot)));
    // Free slots tried in turn: a slot another runtime took meanwhile answers no row.
    for (let slot = 0; slot < limit; slot += 1) {
      if (taken.has(slot)) continue;
      const got = await db.rows<{ slot: number }>('takeSlot', { scope, slot, holder, owner, lease_ms: leaseMs });
      if (got.length > 0) return { ok: true, slot };
    }
    // Full: the soonest a lease lapses bounds the wait (a live holder of a concurrency slot renews it first).
    const lapse = holders.length > 0 ? Math.min(...holders.map((row) => Number(row.expires_at) - Number(row.now))) : 0;
    return { ok: false, waitMs: Math.max(1, lapse + 1), why };
  }

  return {
    heldSlots: async (scope) => (await held(scope)).map(({ now: _now, ...row }) => row),
    takeSlot: (scope, limit, holder, owner, leaseMs) =>
      db.write(() => takeSlot(scope, limit, holder, owner, leaseMs, 'concurrency')),
    releaseSlot: (scope, slot, holder) =>
      db.write(async () => {
        await db.exec('releaseSlot', { scope, slot, holder });
      }),
    renewSlots: (owner, leaseMs) =>
      db.write(async () => {
        await db.exec('renewSlots', { owner, lease_ms: leaseMs });
      }),
    releaseSlotsOf: (owner) =>
      db.write(async () => {
        await db.exec('releaseSlotsOf', { owner });
      }),
    // A turn is a slot no one renews: it lapses an interval after it was taken.
    takeRate: (scope, limit, intervalMs, holder) =>
      db.write(() => takeSlot(scope, limit, holder, RATE_OWNER, intervalMs, 'rate')),
    backOffKey: (scope, afterMs) =>
      db.write(async () => {
        // Without a hint from the service: a second, doubled with each strike in a row, to a minute.
        const strikes = afterMs === undefined ? Number((await keyOf(scope))?.strikes ?? 0) : 0;
        const ms = Math.round(afterMs ?? Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** strikes));
        await db.exec('backOffKey', { scope, after_ms: Math.max(0, ms) });
        return ms;
      }),
    clearStrikes: (scope) =>
      db.write(async () => {
        await db.exec('clearStrikes', { scope });
      }),
  };
}
