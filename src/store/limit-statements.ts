/**
 * The statements of per-key limits (docs/architecture.md §4.13): slots, and a key's back-off. A
 * concurrency limit's slot is a lease a runtime renews while its call runs; a rate limit's is a
 * turn that lapses `interval` after it was taken (a sliding window: at most `limit` turns in any
 * window). Taking a slot is one compare-and-set, so any number of runtimes on one database never
 * hand out more than the limit; times are the database's clock on PostgreSQL.
 */
import { sql } from 'kysely';
import { ACTIVE, nowMs, type Build } from './compile.js';

/** `a` when it is later than `b`, else `b` (SQLite's two-argument `max` is PostgreSQL's `greatest`). */
function later(a: ReturnType<typeof sql>, b: ReturnType<typeof sql>) {
  return sql<number>`(case when ${a} > ${b} then ${a} else ${b} end)`;
}

export const LIMIT_BUILDS = {
  /** The slots of a limit key held now (their leases not lapsed). */
  heldSlots: (db, p, dialect) =>
    db
      .selectFrom('limit_slots')
      .select(['slot', 'holder', 'owner', 'expires_at', nowMs(p, dialect).as('now')])
      .where('scope', '=', p('scope'))
      .where('expires_at', '>=', nowMs(p, dialect))
      .orderBy('slot'),
  /** Takes a slot if no one holds it or its lease lapsed: the slot, or no row. */
  takeSlot: (db, p, dialect) =>
    db
      .insertInto('limit_slots')
      .values({
        scope: p('scope'),
        slot: p('slot'),
        holder: p('holder'),
        owner: p('owner'),
        expires_at: sql<number>`${nowMs(p, dialect)} + ${p('lease_ms')}`,
      })
      .onConflict((oc) =>
        oc
          .columns(['scope', 'slot'])
          .doUpdateSet({
            holder: (eb) => eb.ref('excluded.holder'),
            owner: (eb) => eb.ref('excluded.owner'),
            expires_at: (eb) => eb.ref('excluded.expires_at'),
          })
          .where('limit_slots.expires_at', '<', nowMs(p, dialect)),
      )
      .returning('slot'),
  /** Gives a slot back (only the holder's: a slot taken over after a lapse stays with its new holder). */
  releaseSlot: (db, p) =>
    db
      .deleteFrom('limit_slots')
      .where('scope', '=', p('scope'))
      .where('slot', '=', p('slot'))
      .where('holder', '=', p('holder')),
  /** Extends the leases of every slot `owner` holds (its heartbeat). */
  renewSlots: (db, p, dialect) =>
    db
      .updateTable('limit_slots')
      .set({ expires_at: sql<number>`${nowMs(p, dialect)} + ${p('lease_ms')}` })
      .where('owner', '=', p('owner')),
  /** Gives back every slot of an owner (its runtime closed, or it is known dead). */
  releaseSlotsOf: (db, p) => db.deleteFrom('limit_slots').where('owner', '=', p('owner')),
  /** A limit key's shared state, if it has any. */
  limitKey: (db, p, dialect) =>
    db
      .selectFrom('limit_keys')
      .select(['scope', 'blocked_until', 'strikes', nowMs(p, dialect).as('now')])
      .where('scope', '=', p('scope')),
  /** Backs a key off for `after_ms` from now (a 429), or longer if a back-off already set says so; one more strike. */
  backOffKey: (db, p, dialect) =>
    db
      .insertInto('limit_keys')
      .values({
        scope: p('scope'),
        blocked_until: sql<number>`${nowMs(p, dialect)} + ${p('after_ms')}`,
        strikes: 1,
      })
      .onConflict((oc) =>
        oc.column('scope').doUpdateSet({
          blocked_until: later(sql`excluded.blocked_until`, sql`limit_keys.blocked_until`),
          strikes: sql<number>`limit_keys.strikes + 1`,
        }),
      ),
  /** A call of the key went through: its strikes start again from none. */
  clearStrikes: (db, p) =>
    db.updateTable('limit_keys').set({ strikes: 0 }).where('scope', '=', p('scope')).where('strikes', '>', 0),
  /**
   * One row when the tenant has more than `cap` runs active (queued ones not counted), read on the
   * index `runs_tenant_status` in the unit that inserts a run; `tenant` null: runs without one.
   */
  tenantOverCap: (db, p) =>
    db
      .selectNoFrom(sql<number>`1`.as('over'))
      .where((eb) =>
        eb(
          eb
            .selectFrom('runs')
            .select(eb.fn.countAll().as('n'))
            .where('tenant_id', '=', p('tenant'))
            .where('status', 'in', ACTIVE),
          '>',
          p('cap'),
        ),
      ),
  noTenantOverCap: (db, p) =>
    db
      .selectNoFrom(sql<number>`1`.as('over'))
      .where((eb) =>
        eb(
          eb
            .selectFrom('runs')
            .select(eb.fn.countAll().as('n'))
            .where('tenant_id', 'is', null)
            .where('status', 'in', ACTIVE),
          '>',
          p('cap'),
        ),
      ),
  /** PostgreSQL: the unit's hold on a tenant's count until it commits, so two starts never both pass the cap. */
  lockTenant: (db, p) =>
    db.selectNoFrom(
      sql<unknown>`pg_advisory_xact_lock(hashtext('baton.tenant:' || coalesce(cast(${p('tenant')} as text), '')))`.as(
        'locked',
      ),
    ),
} satisfies Record<string, Build>;
