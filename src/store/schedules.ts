/** Schedules over the schedule statements (`schedule-statements.ts`), the same on both dialects. */
import type { StatementRunner } from './limits.js';
import type { ScheduleRow, StoreSchedules } from './store-api.js';

/** A row as the database gives it: bigints as numbers. */
function toRow(row: ScheduleRow): ScheduleRow {
  const num = (value: number | null) => (value === null ? null : Number(value));
  return {
    ...row,
    next_at: num(row.next_at),
    last_tick_at: num(row.last_tick_at),
    runs: Number(row.runs),
    skipped: Number(row.skipped),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** The schedules of `Store` over a dialect's statements. */
export function schedulesOver(db: StatementRunner): StoreSchedules {
  return {
    insertSchedule: (row) => db.write(async () => (await db.exec('insertSchedule', { ...row })) === 1),
    getSchedule: async (id) => {
      const [row] = await db.rows<ScheduleRow>('getSchedule', { id });
      return row ? toRow(row) : undefined;
    },
    listSchedules: async (tenant, after, limit) =>
      (await db.rows<ScheduleRow>('listSchedules', { tenant, after, limit })).map(toRow),
    dueSchedules: async (now, limit, agents) =>
      (await db.rows<ScheduleRow>('dueSchedules', { now, limit, agent: agents })).map(toRow),
    nextScheduleAt: async () => {
      const [row] = await db.rows<{ at: number | null }>('nextScheduleAt', {});
      return row?.at === null || row?.at === undefined ? null : Number(row.at);
    },
    takeTick: (tick) =>
      db.write(
        async () => (await db.exec('takeTick', { ...tick, status: tick.next_at === null ? 'done' : 'active' })) === 1,
      ),
    countTrigger: (id, runId, now) =>
      db.write(async () => {
        await db.exec('countTrigger', { id, run_id: runId, now });
      }),
    setScheduleStatus: (id, expected, status, nextAt, now) =>
      db.write(async () => (await db.exec('setScheduleStatus', { id, expected, status, next_at: nextAt, now })) === 1),
    deleteSchedule: (id) => db.write(async () => (await db.exec('deleteSchedule', { id })) === 1),
  };
}
