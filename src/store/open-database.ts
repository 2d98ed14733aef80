/**
 * The one function that opens a Baton database. Tests and production both call it, so the
 * durability settings they run under are the same.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { DEFAULTS } from '../defaults.js';
import { MIGRATIONS } from './migrations.js';
import type { Database } from './schema.js';

/** An open database: the native handle for prepared statements and Kysely for building SQL. */
export interface OpenDatabase {
  path: string;
  sqlite: SQLite.Database;
  kysely: Kysely<Database>;
}

/** Opens (creating if needed) and migrates a database file with WAL and `synchronous=FULL`. */
export function openDatabase(path: string): OpenDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path, { timeout: DEFAULTS.busyTimeoutMs });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${DEFAULTS.busyTimeoutMs}`);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  migrate(sqlite, kysely);
  return { path, sqlite, kysely };
}

/** Applies every migration the file has not seen, each in its own immediate transaction. */
export function migrate(sqlite: SQLite.Database, kysely: Kysely<Database>): number {
  sqlite.exec(
    'create table if not exists baton_migrations (version integer primary key, name text not null, applied_at integer not null)',
  );
  let applied = 0;
  for (const migration of MIGRATIONS) {
    // Two processes may open a new file at once; the immediate transaction serializes them
    // and the re-check inside it makes the loser skip what the winner applied.
    sqlite
      .transaction(() => {
        const seen = sqlite.prepare('select 1 from baton_migrations where version = ?').get(migration.version);
        if (seen) return;
        for (const statement of migration.up(kysely)) sqlite.exec(statement.sql);
        sqlite
          .prepare('insert into baton_migrations (version, name, applied_at) values (?, ?, ?)')
          .run(migration.version, migration.name, Date.now());
        applied += 1;
      })
      .immediate();
  }
  return applied;
}
