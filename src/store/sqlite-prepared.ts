/**
 * The catalog's statements on one SQLite handle (`statements.ts`, compiled for SQLite), each
 * prepared once and cached by its text: what every job of the SQLite store runs through, all of
 * it synchronous, so the commit queue's units never go through an async driver.
 */
import type SQLite from 'better-sqlite3';
import { argsOf, catalog, type Compiled, type StatementName } from './statements.js';

const SQL = catalog('sqlite');

/** Named statements bound to one database handle. */
export interface Prepared {
  /** The handle they run on. */
  readonly sqlite: SQLite.Database;
  /** The prepared form of a compiled statement (prepared on first use, then cached). */
  prepare(statement: Compiled): SQLite.Statement;
  /** Runs a write by name with its named values. */
  run(name: StatementName, values: Record<string, unknown>): SQLite.RunResult;
  /** The first row a statement returns, if any. */
  get<T>(name: StatementName, values: Record<string, unknown>): T | undefined;
  /** Every row a statement returns (stepped to its end). */
  all<T>(name: StatementName, values: Record<string, unknown>): T[];
}

/** Binds the SQLite catalog to `sqlite`. */
export function prepareStatements(sqlite: SQLite.Database): Prepared {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (statement: Compiled): SQLite.Statement => {
    let prepared = cache.get(statement.sql);
    if (!prepared) cache.set(statement.sql, (prepared = sqlite.prepare(statement.sql)));
    return prepared;
  };
  return {
    sqlite,
    prepare,
    run: (name, values) => prepare(SQL[name]).run(...argsOf(SQL[name], values)),
    get: <T>(name: StatementName, values: Record<string, unknown>) =>
      prepare(SQL[name]).get(...argsOf(SQL[name], values)) as T | undefined,
    all: <T>(name: StatementName, values: Record<string, unknown>) =>
      prepare(SQL[name]).all(...argsOf(SQL[name], values)) as T[],
  };
}

/** The compiled SQLite statement of `name` (for a job that steps statements itself). */
export function sqliteStatement(name: StatementName): Compiled {
  return SQL[name];
}
