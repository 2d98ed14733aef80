/**
 * The SQLite store's retention: a prune batch, and giving free pages back to the file system,
 * each run as one unit of the commit queue, so live writers wait for at most one batch.
 */
import { argsOf } from './statements.js';
import { pruneBatch, type PruneBatch, type PruneSelection } from './prune-statements.js';
import { sqliteStatement, type Prepared } from './sqlite-prepared.js';
import type { CommitQueue } from './commit-queue.js';
import type { FinishedRun, SpaceReclaimed, StoreRetention } from './store-api.js';

/** The retention of `Store` over the prepared statements, its deletions queued on `queue`. */
export function sqliteRetention(prepared: Prepared, queue: CommitQueue): StoreRetention {
  const { all } = prepared;
  return {
    pruneBatch: async (selection) =>
      selection.dryRun ? prune(prepared, selection) : queue.write(() => prune(prepared, selection)),
    newestFinished: async (status, limit) => all<FinishedRun>('newestFinished', { status, limit }),
    artifactRefsOf: async (sha256s) =>
      all<{ sha256: string; run_id: string; size: number }>('artifactRefsOf', { ids: JSON.stringify(sha256s) }),
    runsOfSessions: async (sessionIds) =>
      all<{ id: string; session_id: string }>('runsOfSessions', { ids: JSON.stringify(sessionIds) }),
    reclaimSpace: (maxPages) => queue.write(() => reclaim(prepared, maxPages)),
  };
}

/** One batch, synchronously: inside a queue unit unless `dryRun`. */
function prune({ prepare }: Prepared, selection: PruneSelection): PruneBatch {
  const steps = pruneBatch('sqlite', selection);
  let next = steps.next();
  while (!next.done) {
    const statement = sqliteStatement(next.value.name);
    const statementOnFile = prepare(statement);
    const args = argsOf(statement, next.value.values);
    next = steps.next(
      statementOnFile.reader
        ? { rows: statementOnFile.all(...args) as Record<string, unknown>[], count: 0 }
        : { rows: [], count: statementOnFile.run(...args).changes },
    );
  }
  return next.value;
}

/** Gives up to `maxPages` free pages back (inside a queue unit). */
function reclaim({ sqlite }: Prepared, maxPages: number): SpaceReclaimed {
  const pageSize = Number(sqlite.pragma('page_size', { simple: true }));
  const before = Number(sqlite.pragma('freelist_count', { simple: true }));
  // Only a file created with incremental auto-vacuum can give pages back (see open-database.ts).
  if (before > 0 && Number(sqlite.pragma('auto_vacuum', { simple: true })) === 2) {
    sqlite.pragma(`incremental_vacuum(${Math.max(1, Math.trunc(maxPages))})`);
  }
  const after = Number(sqlite.pragma('freelist_count', { simple: true }));
  return { freed_pages: before - after, free_pages: after, page_size: pageSize };
}
