/**
 * The one function that opens a Baton database. Tests and production both call it, so the
 * durability settings they run under are the same.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { DEFAULTS } from '../defaults.js';
import { BatonError, createFailure } from '../failure.js';
import { MIGRATIONS } from './migrations.js';
import type { Database } from './schema.js';

/** An open database: the native handle for prepared statements and Kysely for building SQL. */
export interface OpenDatabase {
  path: string;
  sqlite: SQLite.Database;
  kysely: Kysely<Database>;
}

/**
 * Opens (creating if needed) and migrates a database file with WAL and `synchronous=FULL`. A path
 * that cannot be one throws a `BatonError` naming it: `store.open_failed` (a directory, a path
 * under a file, no permission), `store.corrupt` (not SQLite, truncated) or `store.not_baton`
 * (another application's database), and the file is left as it was.
 */
export function openDatabase(path: string): OpenDatabase {
  let sqlite: SQLite.Database | undefined;
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    sqlite = new SQLite(path, { timeout: DEFAULTS.busyTimeoutMs });
    // Reading the schema is the first thing that touches the file: a file that is not SQLite
    // fails here, before anything is written to it.
    const fresh = assertBatonFile(sqlite, path);
    // A new file can give the pages pruned runs leave back to the file system a few at a time
    // (`reclaimSpace` after a prune); it must be chosen before the first table exists. A file
    // created before keeps reusing its free pages, so it stops growing all the same.
    if (fresh) sqlite.pragma('auto_vacuum = INCREMENTAL');
    sqlite.pragma('journal_mode = WAL');
    // The write-ahead log is cut back to this after a checkpoint, so a large prune leaves no large log behind.
    sqlite.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma(`busy_timeout = ${DEFAULTS.busyTimeoutMs}`);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    migrate(sqlite, kysely);
    return { path, sqlite, kysely };
  } catch (error) {
    sqlite?.close();
    throw toOpenError(error, path);
  }
}

/**
 * Tables only Baton creates; a file with other tables and no `baton_migrations` is someone
 * else's. True when the file has no tables yet.
 */
function assertBatonFile(sqlite: SQLite.Database, path: string): boolean {
  const tables = (sqlite.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[])
    .map((row) => row.name)
    .filter((name) => !name.startsWith('sqlite_'));
  if (tables.length > 0 && !tables.includes('baton_migrations')) {
    throw new BatonError(
      createFailure(
        'store.not_baton',
        `'${path}' is another application's database (tables ${tables.slice(0, 5).join(', ')}): Baton will not change it`,
        { details: { path, tables: tables.slice(0, 20) } },
      ),
    );
  }
  return tables.length === 0;
}

const CORRUPT: ReadonlySet<string> = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CORRUPT_VTAB']);

function toOpenError(error: unknown, path: string): BatonError {
  if (error instanceof BatonError) return error;
  const code = String((error as { code?: unknown }).code ?? '');
  const reason = error instanceof Error ? error.message : String(error);
  if (CORRUPT.has(code) || code.startsWith('SQLITE_CORRUPT')) {
    return new BatonError(
      createFailure('store.corrupt', `'${path}' is not a Baton database, or is damaged: ${reason}`, {
        details: { path, sqlite_code: code },
      }),
    );
  }
  return new BatonError(
    createFailure('store.open_failed', `Cannot open the database '${path}': ${reason}`, {
      details: { path, ...(code ? { code } : {}) },
    }),
  );
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
