/**
 * Running the catalog's statements on PostgreSQL (`../statements.ts`, compiled for Postgres):
 * each as a named prepared statement through `pg`, on the pool or on a unit's client.
 */
import type pg from 'pg';
import { writeFailureCause } from '../store-errors.js';
import { argsOf, catalog, type Compiled, type StatementName } from '../statements.js';

/** The PostgreSQL catalog, compiled once. */
export const SQL = catalog('postgres');

/** The pool, or one client of it (a unit's transaction). */
export type Queryable = pg.Pool | pg.PoolClient;

/** Runs `statement` with its named values as a named prepared statement. */
export function query(db: Queryable, statement: Compiled, values: Record<string, unknown>) {
  return db.query({ name: `baton_${statement.key}`, text: statement.sql, values: argsOf(statement, values) });
}

/** A statement that only reads. */
const READ = /^\s*select\b/i;

/** The connection a statement ran on was ended under it (not a refusal of the statement itself). */
function connectionLost(error: unknown): boolean {
  const cause = writeFailureCause(error);
  return (
    cause !== null &&
    (cause.startsWith('57P') ||
      cause.startsWith('08') ||
      ['connection_terminated', 'ECONNRESET', 'EPIPE'].includes(cause))
  );
}

/** Statements by name on the pool: every row, or the first. */
export interface PgRows {
  rows<T>(name: StatementName, values: Record<string, unknown>): Promise<T[]>;
  row<T>(name: StatementName, values: Record<string, unknown>): Promise<T | undefined>;
}

/** Runs statements by name on `pool`; a read that met a connection just ended is asked again once. */
export function pgRows(pool: pg.Pool): PgRows {
  const rows = async <T>(name: StatementName, values: Record<string, unknown>): Promise<T[]> => {
    const statement = SQL[name];
    // A read that met a connection the server had just ended (a restart, an administrator) is
    // asked again: it changes nothing, and the pool has dropped the dead one. The server may have
    // ended every idle connection of the pool at once, so it is asked again until one is fresh.
    for (let attempt = 0; ; attempt += 1) {
      try {
        return (await query(pool, statement, values)).rows as T[];
      } catch (error) {
        if (!READ.test(statement.sql) || !connectionLost(error) || attempt >= pool.options.max) throw error;
      }
    }
  };
  return {
    rows,
    row: async <T>(name: StatementName, values: Record<string, unknown>) => (await rows<T>(name, values))[0],
  };
}
