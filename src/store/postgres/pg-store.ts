/**
 * The store on PostgreSQL: the same statements as SQLite's (`../statements.ts`, compiled for
 * Postgres), run as named prepared statements through a `pg` pool. It implements `Store` job by
 * job: reads, leases, the feed, retention (`pg-*.ts`), units of work (recorded, then committed
 * as one fenced transaction: `pg-units.ts`, `pg-commit.ts`) and LISTEN/NOTIFY (`pg-listener.ts`).
 * A run's units commit one after another, in the order they were queued; units of different
 * runs commit concurrently over the pool.
 */
import { trackWriteFailures } from '../store-errors.js';
import type { Store } from '../store-api.js';
import { openPostgres, type OpenPostgres } from './open-postgres.js';
import { pgRows, query, SQL } from './pg-query.js';
import { pgUnits } from './pg-units.js';
import { pgListener } from './pg-listener.js';
import { pgReads } from './pg-reads.js';
import { pgLeases } from './pg-leases.js';
import { schedulesOver } from '../schedules.js';
import { limitsOver, type StatementRunner } from '../limits.js';
import { directWrite } from '../store-errors.js';
import { pgFeed } from './pg-feed.js';
import { pgRetention } from './pg-retention.js';

/** Opens the store on the PostgreSQL database at `url` (migrated if needed). */
export async function createPostgresStore(url: string, options: { poolSize?: number } = {}): Promise<Store> {
  const opened: OpenPostgres = await openPostgres(url, { max: options.poolSize ?? 10 });
  const { pool } = opened;
  const writeFailures = trackWriteFailures();
  const rows = pgRows(pool);
  const units = pgUnits(pool, writeFailures);
  const listener = pgListener(url);
  const runner: StatementRunner = {
    rows: (name, values) => rows.rows(name, values),
    exec: async (name, values) => (await query(pool, SQL[name], values)).rowCount ?? 0,
    write: (change) => directWrite(writeFailures, change),
  };
  return {
    dialect: 'postgres',
    write: units.write,
    get commits() {
      return units.commits;
    },
    get writeFailure() {
      return writeFailures.current;
    },
    listen: listener.listen,
    async close() {
      // No unit is taken from here on; the ones queued commit (or fail) before the pool ends.
      const settled = units.close();
      await listener.close();
      await settled;
      await opened.close();
    },
    ...pgReads(pool, rows),
    ...pgLeases(pool, rows, writeFailures),
    ...limitsOver(runner),
    ...schedulesOver(runner),
    ...pgFeed(pool, rows),
    ...pgRetention(pool, rows, writeFailures, () => units.closed),
  };
}
