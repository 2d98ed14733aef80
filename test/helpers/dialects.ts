/**
 * The conformance suite's loop over real databases: every test in `test/conformance/` runs once
 * on a SQLite file and once on a PostgreSQL database of its own (when a cluster is given, as in
 * CI; see `pg.ts`).
 */
import { createSqliteStore, type Store } from '../../src/store/index.js';
import { createPostgresStore } from '../../src/store/postgres/pg-store.js';
import { freshDatabase, hasPostgres } from './pg.js';
import { tempFiles } from './temp.js';

export type DialectName = 'sqlite' | 'postgres';

/** The dialects this run covers. */
export const DIALECTS: DialectName[] = hasPostgres() ? ['sqlite', 'postgres'] : ['sqlite'];

/** A fresh, empty database of `dialect`: a file path or a URL, and an effects file beside it. */
export async function freshDatabaseOf(dialect: DialectName): Promise<{ database: string; effects: string }> {
  const files = tempFiles();
  return { database: dialect === 'sqlite' ? files.db : await freshDatabase(), effects: files.effects };
}

/** The runtime's store on a fresh database of `dialect`. */
export async function freshStoreOf(dialect: DialectName): Promise<Store> {
  const { database } = await freshDatabaseOf(dialect);
  return dialect === 'sqlite' ? createSqliteStore(database) : createPostgresStore(database);
}
