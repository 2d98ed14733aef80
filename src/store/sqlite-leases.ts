/**
 * The SQLite store's leases: who drives which run, changed outside the commit queue (one
 * autocommitted statement each, on the caller's turn), so a claim never waits behind a batch.
 * Lease times are this process's clock.
 */
import { directWrite, type WriteFailures } from './store-errors.js';
import type { Prepared } from './sqlite-prepared.js';
import type { Claim, HeldRun, StoreLeases } from './store-api.js';

/** The leases of `Store` over the prepared statements; a refused write is noted in `failures`. */
export function sqliteLeases({ get, all, run }: Prepared, failures: WriteFailures): StoreLeases {
  // Writes outside the commit queue fail as the queue's do.
  const write = <T>(change: () => T) => directWrite(failures, change);
  return {
    claimRun: (id, owner, leaseMs, isDead) =>
      write(() => {
        const now = Date.now();
        // `all`, not `get`: an UPDATE … RETURNING commits when it is stepped to its end, and only
        // then does a refused commit (a full disk) throw; `get` stops at the first row and the
        // failed commit would go unseen, a claim reported that the file does not hold.
        const claimed = all<{ epoch: number }>('claimRun', { id, owner, lease_ms: leaseMs, now })[0];
        if (claimed) return claimed.epoch;
        // Held by another owner: taken over only if that owner is known to be gone.
        const lease = get<{ owner: string | null }>('leaseOf', { id });
        if (!lease?.owner || !isDead(lease.owner)) return null;
        const taken = all<{ epoch: number }>('takeLease', {
          id,
          owner,
          lease_ms: leaseMs,
          now,
          previous: lease.owner,
        })[0];
        return taken?.epoch ?? null;
      }),
    claimRuns: (owner, leaseMs, limit, agent = null) =>
      write(() => all<Claim>('claimRuns', { owner, lease_ms: leaseMs, limit, now: Date.now(), agent })),
    inFlightOwners: async () => all<{ owner: string }>('inFlightOwners', {}).map((r) => r.owner),
    claimRunsOf: (dead, owner, leaseMs, limit, agent = null) =>
      write(() => all<Claim>('claimRunsOf', { dead, owner, lease_ms: leaseMs, limit, now: Date.now(), agent })),
    // Only the runs this runtime drives, looked up by id.
    renewLeases: (owner, leaseMs, ids) =>
      write(() => all<HeldRun>('renewLeases', { owner, lease_ms: leaseMs, now: Date.now(), ids: JSON.stringify(ids) })),
    requestCancel: (id, request) => write(() => run('requestCancel', { id, request }).changes === 1),
    requestPause: (id, request) => write(() => run('requestPause', { id, request }).changes === 1),
    decideInFlight: (id, decision) => write(() => run('decideApproval', { id, ...decision }).changes === 1),
    releaseLease: (id, owner, epoch) =>
      write(() => {
        run('releaseLease', { id, owner, epoch: epoch ?? -1 });
      }),
    releaseLeases: (owner) =>
      write(() => {
        run('releaseLeases', { owner });
      }),
  };
}
