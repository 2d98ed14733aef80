/**
 * Committing one PostgreSQL unit of work: `work` records its writes, which then run as one
 * transaction — first the fence (the run's row locked only if this owner still holds it at the
 * claimed epoch), then the writes, each conditional one checked, then the notifications, sent
 * as it commits. The common unit of a run goes as one fenced statement instead (`fenced-unit.ts`).
 */
import type pg from 'pg';
import { staleFence, versionConflict } from '../store-errors.js';
import type { Fence, UnitWriter } from '../store-api.js';
import { fencedUnit } from './fenced-unit.js';
import { notesOf } from './pg-notes.js';
import { query, SQL } from './pg-query.js';
import { recorder, type RecordedWrite } from './pg-recorder.js';

/** What `work` returned, and whether a transaction committed (a unit without writes has none). */
export interface UnitOutcome<T> {
  value: T;
  committed: boolean;
}

/** Runs `work` and commits what it wrote under `fence`; rejects, with nothing committed, when a write or the fence fails. */
export async function commitUnit<T>(
  pool: pg.Pool,
  work: (writer: UnitWriter) => T,
  fence: Fence | undefined,
): Promise<UnitOutcome<T>> {
  const ops: RecordedWrite[] = [];
  const value = work(recorder(ops));
  if (ops.length === 0) return { value, committed: false };
  // The common unit (a snapshot, its events, ledger rows): one fenced statement, one round trip.
  const fast = fence ? fencedUnit(ops, fence, notesOf(ops)) : null;
  if (fast && fence) {
    const {
      rows: [counts],
    } = await pool.query<{ fenced: number; saved?: number }>({ name: fast.name, text: fast.text, values: fast.values });
    if (counts?.fenced !== 1) throw staleFence(fence);
    if (fast.saves && counts.saved !== 1) throw versionConflict(fence.runId);
    return { value, committed: true };
  }
  await inTransaction(pool, ops, fence);
  return { value, committed: true };
}

/** The transaction path: any unit, a round trip per write. */
async function inTransaction(pool: pg.Pool, ops: readonly RecordedWrite[], fence: Fence | undefined): Promise<void> {
  const client = await pool.connect();
  const literal = (value: string) => client.escapeLiteral(value);
  try {
    // Fewer round trips: BEGIN goes with the fence, the notifications with COMMIT, each pair
    // one simple query (values escaped as literals); the writes are prepared statements.
    // A new run's unit inserts the row it would be fenced on.
    if (fence && ops[0]?.name !== 'ensureSession' && ops[0]?.name !== 'insertRun') {
      const results = (await client.query(
        `begin; select id from runs where id = ${literal(fence.runId)} and owner = ${literal(fence.owner)} and epoch = ${Math.trunc(fence.epoch)} for update`,
      )) as unknown as pg.QueryResult[];
      if (results[1]?.rowCount !== 1) throw staleFence(fence);
    } else {
      await client.query('begin');
    }
    for (const op of ops) {
      const done = await query(client, SQL[op.name], op.values);
      op.check?.(done.rowCount ?? 0);
    }
    const notify = notesOf(ops).map(
      ([channel, payload]) => `select pg_notify(${literal(channel)}, ${literal(payload)}); `,
    );
    await client.query(`${notify.join('')}commit`);
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
