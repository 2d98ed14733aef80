/**
 * The statements of leases: which runtime drives which run. Claims bump the run's `epoch`, which
 * every later write of the run carries (fencing); lease times are the database's clock on
 * PostgreSQL, where concurrent claims skip rows another worker is claiming.
 */
import { sql } from 'kysely';
import { ACTIVE, idIn, IN_FLIGHT, nowMs, ofAgent, type Build, type Dialect } from './compile.js';

/** What a claim sets: the new owner, its lease by the clock of `nowMs`, the next epoch. */
function claimedBy(p: <T = never>(name: string) => T, dialect: Dialect) {
  return {
    owner: p('owner'),
    lease_until: sql<number>`${nowMs(p, dialect)} + ${p('lease_ms')}`,
    epoch: sql<number>`epoch + 1`,
  };
}

export const LEASE_BUILDS = {
  leaseOf: (db, p) => db.selectFrom('runs').select(['owner', 'lease_until', 'epoch']).where('id', '=', p('id')),
  /** The run is still held by this owner at this epoch (a unit's fence, checked in its transaction). */
  holdsRun: (db, p) =>
    db
      .selectFrom('runs')
      .select('id')
      .where('id', '=', p('id'))
      .where('owner', '=', p('owner'))
      .where('epoch', '=', p('epoch')),
  /** Takes the lease of one run if it is free, lapsed or already ours; the new epoch. */
  claimRun: (db, p, dialect) =>
    db
      .updateTable('runs')
      .set(claimedBy(p, dialect))
      .where('id', '=', p('id'))
      .where((eb) =>
        eb.or([eb('owner', 'is', null), eb('owner', '=', p('owner')), eb('lease_until', '<', nowMs(p, dialect))]),
      )
      .returning('epoch'),
  /**
   * Claims up to `limit` runs in flight that no one holds or whose lease lapsed, oldest lease
   * first (the index on `(lease_until, id)`); on PostgreSQL rows another worker is claiming are
   * skipped, so concurrent claims never wait on each other or take the same run. Never a run the
   * claimer holds itself: its heartbeat renews that lease, lapsed or not, while a claim would bump
   * the epoch under the claimer's own driver and fence out the unit it has in flight.
   */
  claimRuns: (db, p, dialect) => {
    let free = db
      .selectFrom('runs')
      .select('id')
      .where('status', 'in', IN_FLIGHT)
      .where(ofAgent(p))
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowMs(p, dialect))]))
      .where((eb) => eb.or([eb('owner', 'is', null), eb('owner', '<>', p('owner'))]))
      .orderBy('lease_until', (ob) => ob.asc().nullsFirst())
      .orderBy('id')
      .limit(p('limit'));
    if (dialect === 'postgres') free = free.forUpdate().skipLocked();
    return db.updateTable('runs').set(claimedBy(p, dialect)).where('id', 'in', free).returning(['id', 'epoch']);
  },
  /** Takes a lease from the owner read just before (compare-and-set on the owner). */
  takeLease: (db, p, dialect) =>
    db
      .updateTable('runs')
      .set(claimedBy(p, dialect))
      .where('id', '=', p('id'))
      .where(sql<string>`coalesce(owner, '')`, '=', p('previous'))
      .returning('epoch'),
  renewLeases: (db, p, dialect) =>
    db
      .updateTable('runs')
      .set({ lease_until: sql`${nowMs(p, dialect)} + ${p('lease_ms')}` })
      .where('id', 'in', idIn(p, dialect))
      .where('owner', '=', p('owner'))
      .returning(['id', 'cancel_requested', 'pause_requested']),
  /** The owners holding runs in flight (a worker looks for its own host's dead ones). */
  inFlightOwners: (db) =>
    db.selectFrom('runs').select('owner').distinct().where('status', 'in', IN_FLIGHT).where('owner', 'is not', null),
  /** Takes up to `limit` runs in flight from an owner known to be dead, whatever their lease says. */
  claimRunsOf: (db, p, dialect) => {
    let held = db
      .selectFrom('runs')
      .select('id')
      .where('owner', '=', p('dead'))
      .where('status', 'in', IN_FLIGHT)
      .where(ofAgent(p))
      .orderBy('id')
      .limit(p('limit'));
    if (dialect === 'postgres') held = held.forUpdate().skipLocked();
    return db
      .updateTable('runs')
      .set(claimedBy(p, dialect))
      .where('id', 'in', held)
      .where('owner', '=', p('dead'))
      .returning(['id', 'epoch']);
  },
  requestCancel: (db, p) =>
    db
      .updateTable('runs')
      .set({ cancel_requested: p('request') })
      .where('id', '=', p('id'))
      .where('status', 'in', ACTIVE),
  /** A pause asked of a run in flight or waiting; a second ask before the first is reached changes nothing. */
  requestPause: (db, p) =>
    db
      .updateTable('runs')
      .set({ pause_requested: p('request') })
      .where('id', '=', p('id'))
      .where('status', 'in', ['planning', 'executing', 'waiting_human'])
      .where('pause_requested', 'is', null),
  releaseLease: (db, p) =>
    db
      .updateTable('runs')
      .set({ owner: null, lease_until: null })
      .where('id', '=', p('id'))
      .where('owner', '=', p('owner'))
      // -1: any epoch.
      .where((eb) => eb.or([eb('epoch', '=', p('epoch')), sql<boolean>`cast(${p('epoch')} as bigint) < 0`])),
  releaseLeases: (db, p) =>
    db.updateTable('runs').set({ owner: null, lease_until: null }).where('owner', '=', p('owner')),
} satisfies Record<string, Build>;
