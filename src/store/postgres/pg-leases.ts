/**
 * The PostgreSQL store's leases: who drives which run, one autocommitted statement each on the
 * pool, lease times the database's clock. A cancel asked of a run and a lease let go are
 * announced at once, so the runtime or worker concerned need not wait for its next renewal or poll.
 */
import type pg from 'pg';
import { directWrite, type WriteFailures } from '../store-errors.js';
import type { Claim, HeldRun, StoreLeases } from '../store-api.js';
import { CANCEL_CHANNEL, RUNS_CHANNEL } from './pg-notes.js';
import { query, SQL, type PgRows } from './pg-query.js';

/** The leases of `Store` on `pool`; a refused write is noted in `failures`. */
export function pgLeases(pool: pg.Pool, { rows, row }: PgRows, failures: WriteFailures): StoreLeases {
  // Writes outside a unit fail as a unit's do.
  const write = <T>(change: () => Promise<T>) => directWrite(failures, change);
  return {
    claimRun: (id, owner, leaseMs, isDead) =>
      write(async () => {
        const claimed = await row<{ epoch: number }>('claimRun', { id, owner, lease_ms: leaseMs });
        if (claimed) return claimed.epoch;
        const lease = await row<{ owner: string | null }>('leaseOf', { id });
        if (!lease?.owner || !isDead(lease.owner)) return null;
        const taken = await row<{ epoch: number }>('takeLease', {
          id,
          owner,
          lease_ms: leaseMs,
          previous: lease.owner,
        });
        return taken?.epoch ?? null;
      }),
    claimRuns: (owner, leaseMs, limit, agent) =>
      write(() => rows<Claim>('claimRuns', { owner, lease_ms: leaseMs, limit, agent: agent ?? null })),
    async inFlightOwners() {
      return (await rows<{ owner: string }>('inFlightOwners', {})).map((r) => r.owner);
    },
    claimRunsOf: (dead, owner, leaseMs, limit, agent) =>
      write(() => rows<Claim>('claimRunsOf', { dead, owner, lease_ms: leaseMs, limit, agent: agent ?? null })),
    renewLeases: (owner, leaseMs, ids) =>
      write(async () => {
        if (ids.length === 0) return [];
        return rows<HeldRun>('renewLeases', { owner, lease_ms: leaseMs, ids: [...ids] });
      }),
    requestCancel: (id, request) =>
      write(async () => {
        const done = await query(pool, SQL.requestCancel, { id, request });
        if (done.rowCount !== 1) return false;
        // The runtime that drives the run hears it now rather than at its next renewal.
        await pool.query('select pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
        return true;
      }),
    requestPause: (id, request) =>
      write(async () => {
        const done = await query(pool, SQL.requestPause, { id, request });
        if (done.rowCount !== 1) return false;
        // The runtime that drives the run hears it now (on the cancel channel: asks of a run's driver).
        await pool.query('select pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
        return true;
      }),
    decideInFlight: (id, decision) =>
      write(async () => (await query(pool, SQL.decideApproval, { id, ...decision })).rowCount === 1),
    releaseLease: (id, owner, epoch) =>
      write(async () => {
        await query(pool, SQL.releaseLease, { id, owner, epoch: epoch ?? -1 });
        // Free for a worker to claim: tell them now rather than at their next poll.
        await pool.query('select pg_notify($1, $2)', [RUNS_CHANNEL, '']);
      }),
    releaseLeases: (owner) =>
      write(async () => {
        await query(pool, SQL.releaseLeases, { owner });
      }),
  };
}
