/**
 * Opening a Baton database on PostgreSQL: a `pg` pool whose int8 and numeric values come back
 * as JavaScript numbers (millisecond times and counters stay below 2^53), Kysely over it with
 * `PostgresDialect`, and the Postgres migrations applied once under an advisory lock, so any
 * number of processes may open the same database at the same moment.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { BatonError, createFailure } from '../../failure.js';
import type { Database } from '../schema.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/** An open Postgres database. */
export interface OpenPostgres {
  kysely: Kysely<Database>;
  pool: pg.Pool;
  /** Migrations applied, newest last. */
  applied(): Promise<number[]>;
  close(): Promise<void>;
}

/** Arbitrary, fixed: the advisory lock every Baton process takes while it migrates. */
const MIGRATION_LOCK = 7_261_432_118;

/** int8 (20) and numeric (1700) as numbers; everything Baton stores in them fits in 2^53. */
function numberTypes(): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: string) => {
      if (oid === 20 || oid === 1700) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format as 'text');
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

/** A URL as it may be shown: its password replaced by `***`. */
function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

/** Opens (and migrates) the database at `url` (`postgres://…`). */
export async function openPostgres(url: string, options: { max?: number } = {}): Promise<OpenPostgres> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types: numberTypes() });
  // An idle connection the server ends (a restart, an administrator) must not crash the process:
  // the pool drops it and the next query opens another.
  pool.on('error', () => undefined);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await kysely.connection().execute(async (db) => {
      // The lock first: two sessions creating the same table at once can collide even with `if not exists`.
      await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(db);
      try {
        await sql`create table if not exists baton_migrations (version integer primary key, name text not null, applied_at bigint not null)`.execute(
          db,
        );
        const done = new Set(
          (await db.selectFrom('baton_migrations').select('version').execute()).map((row) => row.version),
        );
        for (const migration of POSTGRES_MIGRATIONS) {
          if (done.has(migration.version)) continue;
          await db.transaction().execute(async (tx) => {
            for (const statement of migration.up(tx)) await tx.executeQuery(statement as never);
            await tx
              .insertInto('baton_migrations')
              .values({ version: migration.version, name: migration.name, applied_at: Date.now() })
              .execute();
          });
        }
      } finally {
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(db);
      }
    });
  } catch (error) {
    await kysely.destroy().catch(() => undefined);
    const message = error instanceof Error ? error.message : String(error);
    const where = maskedUrl(url);
    throw new BatonError(
      createFailure('store.open_failed', `Cannot open the Postgres database ${where}: ${message}`, {
        details: { database: where },
      }),
    );
  }
  return {
    kysely,
    pool,
    async applied() {
      return (await kysely.selectFrom('baton_migrations').select('version').orderBy('version').execute()).map(
        (row) => row.version,
      );
    },
    close: () => kysely.destroy(),
  };
}
