/**
 * The statements of schedules (docs/architecture.md §3, "Schedules"): stored definitions, the
 * ticks due, and taking a tick by a compare-and-set on `next_at`.
 */
import { sql } from 'kysely';
import { inAgentSet, type Build } from './compile.js';

const COLUMNS = [
  'id',
  'tenant_id',
  'agent',
  'definition',
  'spec_hash',
  'status',
  'next_at',
  'last_tick_at',
  'last_run_id',
  'runs',
  'skipped',
  'created_at',
  'updated_at',
] as const;

export const SCHEDULE_BUILDS = {
  /** A new schedule; an id taken already inserts nothing (the caller compares the definitions). */
  insertSchedule: (db, p) =>
    db
      .insertInto('schedules')
      .values(Object.fromEntries(COLUMNS.map((column) => [column, p(column)])) as never)
      .onConflict((oc) => oc.column('id').doNothing()),
  getSchedule: (db, p) => db.selectFrom('schedules').select(COLUMNS).where('id', '=', p('id')),
  /** A tenant's schedules by id (all tenants' when `tenant` is null). */
  listSchedules: (db, p) =>
    db
      .selectFrom('schedules')
      .select(COLUMNS)
      .where((eb) => eb.or([sql<boolean>`cast(${p('tenant')} as text) is null`, eb('tenant_id', '=', p('tenant'))]))
      .where('id', '>', p('after'))
      .orderBy('id')
      .limit(p('limit')),
  /** Active schedules whose next tick is due, soonest first, of the agents a set names (or any). */
  dueSchedules: (db, p) =>
    db
      .selectFrom('schedules')
      .select(COLUMNS)
      .where('status', '=', 'active')
      .where('next_at', '<=', p('now'))
      .where((eb) => eb.or([sql<boolean>`cast(${p('agent')} as text) is null`, eb('agent', 'is', null), inAgentSet(p)]))
      .orderBy('next_at')
      .orderBy('id')
      .limit(p('limit')),
  /** The soonest tick of any active schedule (the scheduler's next wake). */
  nextScheduleAt: (db) =>
    db
      .selectFrom('schedules')
      .select((eb) => eb.fn.min('next_at').as('at'))
      .where('status', '=', 'active'),
  /** Takes the tick at `expected`: the next one set, what it started counted; no row changed when another took it. */
  takeTick: (db, p) =>
    db
      .updateTable('schedules')
      .set({
        next_at: p('next_at'),
        status: p('status'),
        last_tick_at: p('tick_at'),
        last_run_id: sql<string | null>`coalesce(${p('run_id')}, last_run_id)`,
        runs: sql<number>`runs + ${p('started')}`,
        skipped: sql<number>`skipped + ${p('skipped')}`,
        updated_at: p('now'),
      })
      .where('id', '=', p('id'))
      .where('status', '=', 'active')
      .where('next_at', '=', p('expected')),
  /** A run started by hand (`trigger`): counted, and remembered as the last. */
  countTrigger: (db, p) =>
    db
      .updateTable('schedules')
      .set({ last_run_id: p('run_id'), runs: sql<number>`runs + 1`, updated_at: p('now') })
      .where('id', '=', p('id')),
  /** Pauses or resumes: its status and next tick (from `from`), if it is in the status expected. */
  setScheduleStatus: (db, p) =>
    db
      .updateTable('schedules')
      .set({ status: p('status'), next_at: p('next_at'), updated_at: p('now') })
      .where('id', '=', p('id'))
      .where('status', '=', p('expected')),
  deleteSchedule: (db, p) => db.deleteFrom('schedules').where('id', '=', p('id')),
} satisfies Record<string, Build>;
