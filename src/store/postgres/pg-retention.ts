/**
 * The PostgreSQL store's retention: a prune batch as one transaction on a client of its own (a
 * dry run reads only), and nothing to give back, since PostgreSQL's autovacuum reuses the space.
 */
import type pg from 'pg';
import { BatonError, createFailure } from '../../failure.js';
import { directWrite, type WriteFailures } from '../store-errors.js';
import { pruneBatch, type PruneBatch, type PruneSelection } from '../prune-statements.js';
import type { FinishedRun, StoreRetention } from '../store-api.js';
import { query, SQL, type PgRows } from './pg-query.js';

/** The retention of `Store` on `pool`; a refused write is noted in `failures`. */
export function pgRetention(
  pool: pg.Pool,
  { rows }: PgRows,
  failures: WriteFailures,
  isClosed: () => boolean,
): StoreRetention {
  return {
    // A batch is written outside a unit: it fails as a unit does.
    pruneBatch: (selection) =>
      directWrite(failures, () => {
        if (isClosed()) throw new BatonError(createFailure('run.closed', 'The store is closed'));
        return prune(pool, selection);
      }),
    newestFinished: (status, limit) => rows<FinishedRun>('newestFinished', { status, limit }),
    artifactRefsOf: (sha256s) =>
      rows<{ sha256: string; run_id: string; size: number }>('artifactRefsOf', { ids: [...sha256s] }),
    runsOfSessions: (sessionIds) =>
      rows<{ id: string; session_id: string }>('runsOfSessions', { ids: [...sessionIds] }),
    // Deleted rows' space is reused by PostgreSQL once autovacuum has seen them; nothing to give back here.
    reclaimSpace: async () => ({ freed_pages: 0, free_pages: 0, page_size: 8192 }),
  };
}

/** One batch: its steps' statements in one transaction (none when dry). */
async function prune(pool: pg.Pool, selection: PruneSelection): Promise<PruneBatch> {
  const client = await pool.connect();
  try {
    if (!selection.dryRun) await client.query('begin');
    const steps = pruneBatch('postgres', selection);
    let next = steps.next();
    while (!next.done) {
      const done = await query(client, SQL[next.value.name], next.value.values);
      next = steps.next({ rows: done.rows as Record<string, unknown>[], count: done.rowCount ?? 0 });
    }
    if (!selection.dryRun) await client.query('commit');
    return next.value;
  } catch (error) {
    if (!selection.dryRun) await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
