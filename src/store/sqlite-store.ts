/**
 * The store on SQLite: one database file, its group-commit queue, and the catalog's statements
 * (`statements.ts`, built by Kysely) as cached better-sqlite3 prepared statements. It implements
 * `Store` job by job — reads, leases, the feed, retention (`sqlite-*.ts`) and units of work
 * (`sqlite-writer.ts`) — all synchronous underneath, so the hot path never goes through an async
 * driver.
 */
import { toWriteError, trackWriteFailures } from './store-errors.js';
import { createCommitQueue, type CommitQueue } from './commit-queue.js';
import { openDatabase, type OpenDatabase } from './open-database.js';
import { prepareStatements } from './sqlite-prepared.js';
import { sqliteReads } from './sqlite-reads.js';
import { sqliteLeases } from './sqlite-leases.js';
import { schedulesOver } from './schedules.js';
import { limitsOver, type StatementRunner } from './limits.js';
import { directWrite } from './store-errors.js';
import { sqliteFeed } from './sqlite-feed.js';
import { sqliteRetention } from './sqlite-retention.js';
import { sqliteWrite } from './sqlite-writer.js';
import type { Store, StoreNote } from './store-api.js';

/**
 * The store on a SQLite file, with what only a file has: the open database (for Baton's
 * white-box tests) and its commit queue (which the runtime flushes as it closes).
 */
export interface SqliteStore extends Store {
  readonly dialect: 'sqlite';
  /** The open file (its better-sqlite3 handle and Kysely instance). */
  readonly db: OpenDatabase;
  /** The group-commit queue every unit of work goes through. */
  readonly queue: CommitQueue;
}

/** Opens the store on a SQLite database file (created and migrated if needed). */
export function createSqliteStore(path: string): SqliteStore {
  const db: OpenDatabase = openDatabase(path);
  const { sqlite } = db;
  const prepared = prepareStatements(sqlite);
  const writeFailures = trackWriteFailures();
  const queue: CommitQueue = createCommitQueue(sqlite, toWriteError, writeFailures);
  // A file has no channel to hear other processes on; this process's own listeners hear that
  // one of its writes made a queued run `pending` (to be claimed).
  const listeners = new Set<(note: StoreNote) => void>();
  const runsToDrive = () => {
    for (const listener of listeners) listener({ kind: 'runs' });
  };
  const runner: StatementRunner = {
    rows: async (name, values) => prepared.all(name, { ...values, now: Date.now() }),
    exec: async (name, values) => prepared.run(name, { ...values, now: Date.now() }).changes,
    write: (change) => directWrite(writeFailures, change),
  };
  return {
    dialect: 'sqlite',
    db,
    queue,
    write: sqliteWrite(prepared, queue, runsToDrive),
    get commits() {
      return queue.commits;
    },
    get writeFailure() {
      return writeFailures.current;
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      queue.flushNow();
      sqlite.close();
    },
    ...sqliteReads(prepared),
    ...sqliteLeases(prepared, writeFailures),
    ...limitsOver(runner),
    ...schedulesOver(runner),
    ...sqliteFeed(prepared, writeFailures),
    ...sqliteRetention(prepared, queue),
  };
}
