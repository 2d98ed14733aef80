/**
 * The loop over real databases: a dialect-looped suite (`describe.each(ALL_DIALECTS)`) runs once
 * on a SQLite file and once on a PostgreSQL database of its own (when a cluster is given, as in
 * CI; see `pg.ts`). Without a cluster its PostgreSQL tests are reported skipped, not left out.
 */
import { afterEach, beforeEach } from 'vitest';
import type { Runtime } from '../../src/index.js';
import { storeOf } from '../../src/runtime/internals.js';
import { createSqliteStore, type Store } from '../../src/store/index.js';
import { createPostgresStore } from '../../src/store/postgres/pg-store.js';
import { freshDatabase, hasPostgres } from './pg.js';
import { tempFiles } from './temp.js';

export type DialectName = 'sqlite' | 'postgres';

/** Every dialect, for `describe.each`; each suite calls `skipUnlessAvailable` first. */
export const ALL_DIALECTS: DialectName[] = ['sqlite', 'postgres'];

/** The dialects this run covers (PostgreSQL only with a cluster). */
export const DIALECTS: DialectName[] = hasPostgres() ? ['sqlite', 'postgres'] : ['sqlite'];

/** Skips, visibly, every test of the calling suite when this run has no database of `dialect`. */
export function skipUnlessAvailable(dialect: DialectName): void {
  beforeEach((context) => {
    if (!DIALECTS.includes(dialect)) context.skip('no PostgreSQL cluster: BATON_TEST_PG_URL is unset');
  });
}

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

const peeks: Store[] = [];

afterEach(async () => {
  for (const store of peeks.splice(0)) await store.close();
});

/**
 * The rows behind `runtime`, which runs on `database`, for tests that check them directly: on
 * SQLite the runtime's own store, on PostgreSQL a second connection to its database (closed
 * after the test), since the runtime hands out only its SQLite store.
 */
export async function rowsOf(runtime: Runtime, database: string, dialect: DialectName): Promise<Store> {
  if (dialect === 'sqlite') return storeOf(runtime);
  const store = await createPostgresStore(database);
  peeks.push(store);
  return store;
}
