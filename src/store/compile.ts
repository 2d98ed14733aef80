/**
 * Compiling a statement once for a dialect. A statement is written as a Kysely query whose
 * values are named parameters (`p('id')`); compiling it for SQLite or PostgreSQL yields its text
 * and the order its parameters go in, so each dialect can run it as a prepared statement.
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type Compilable,
  type RawBuilder,
} from 'kysely';
import { ACTIVE_STATUSES, IN_FLIGHT_STATUSES, TERMINAL_STATUSES } from '../../machines/types.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** A named parameter; compiled to a placeholder, its value supplied when the statement runs. */
class Param {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/** A statement compiled for one dialect. */
export interface Compiled {
  /** Stable within a process: the PostgreSQL prepared statement's name. */
  key: string;
  sql: string;
  /** Parameter names in placeholder order; a constant of the statement (a status, say) is given as its value. */
  params: readonly (string | { value: unknown })[];
}

/** Builds a statement: `p(name)` stands for a parameter. */
export type Build = (db: Kysely<Database>, p: <T = never>(name: string) => T, dialect: Dialect) => Compilable;

/** Kysely instances that only compile (they never connect). */
const builders: Record<Dialect, Kysely<Database>> = {
  sqlite: new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
};

/** Compiles `build` for `dialect`, naming each placeholder's parameter. */
export function compileStatement(key: string, dialect: Dialect, build: Build): Compiled {
  const p = <T>(name: string): T => new Param(name) as unknown as T;
  const compiled = build(builders[dialect], p, dialect).compile();
  const params = compiled.parameters.map((value) => (value instanceof Param ? value.name : { value }));
  return { key, sql: compiled.sql, params };
}

/** Orders a statement's arguments as its placeholders want them. */
export function argsOf(statement: Compiled, values: Record<string, unknown>): unknown[] {
  return statement.params.map((name) => {
    if (typeof name !== 'string') return name.value;
    const value = values[name];
    if (value === undefined) throw new Error(`Statement '${statement.key}' needs parameter '${name}'`);
    return value;
  });
}

/** A list of ids as one parameter (`name`, default `ids`: JSON text on SQLite, an array on PostgreSQL; see `idList`). */
export function idIn(p: <T = never>(name: string) => T, dialect: Dialect, name = 'ids'): RawBuilder<string> {
  return dialect === 'sqlite'
    ? sql<string>`(select value from json_each(${p(name)}))`
    : sql<string>`(select unnest(${p(name)}::text[]))`;
}

/** The value of an `idIn` parameter for `dialect`. */
export function idList(dialect: Dialect, ids: readonly string[]): unknown {
  return dialect === 'sqlite' ? JSON.stringify(ids) : [...ids];
}

/**
 * Milliseconds since the epoch for lease times: PostgreSQL's own clock (workers on other hosts
 * may disagree with each other, the database is the one clock), SQLite's caller's (`now`).
 */
export function nowMs(p: <T = never>(name: string) => T, dialect: Dialect): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`${p('now')}`;
}

/**
 * Runs of the agents a set names (parameter `agent`, an `AgentSet`), or of any when it is null;
 * rows from before migration 12 have no agent and belong to every agent.
 */
export function ofAgent(p: <T = never>(name: string) => T): RawBuilder<boolean> {
  return sql<boolean>`(cast(${p('agent')} as text) is null or agent is null or ${inAgentSet(p)})`;
}

/** True when the row's agent is one the set (parameter `agent`) names. */
export function inAgentSet(p: <T = never>(name: string) => T): RawBuilder<boolean> {
  // Agent names are `[a-z][a-z0-9-]*`: none holds a LIKE wildcard or the separator.
  return sql<boolean>`(cast(${p('agent')} as text) like ('%|' || agent || '|%'))`;
}

/**
 * The agents a runtime drives, as the statements take them: one text, each name between bars
 * (`|main|researcher|`). A runtime of one agent passes a set of one.
 */
export type AgentSet = string;

/** The set of `names`, as the statements that filter by agent take it. */
export function agentSet(names: readonly string[]): AgentSet {
  return `|${[...new Set(names)].sort().join('|')}|`;
}

/** The machine's status lists, under the names the statements filter by. */
export const ACTIVE = ACTIVE_STATUSES;
export const IN_FLIGHT = IN_FLIGHT_STATUSES;
export const FINISHED = TERMINAL_STATUSES;

/**
 * The conditions of the partial indexes `runs_wake` and `runs_finished` (SQLite migration 21,
 * PostgreSQL 14), word for word: a statement that reads one of them says its condition so.
 */
export const WAITING_TERM = sql<boolean>`status = 'waiting_human'`;
export const FINISHED_TERM = sql<boolean>`status in ('succeeded', 'failed')`;

/**
 * The session `session` (a parameter, or a column of the outer query) has no active run: the
 * condition under which a queue moves and a finished run may be pruned (one active run per session).
 */
export function noActiveRunIn(session: unknown): RawBuilder<boolean> {
  return sql<boolean>`not exists (select 1 from runs as a where a.session_id = ${session} and a.status in (${sql.join(
    ACTIVE.map((status) => sql.val(status)),
  )}))`;
}

/**
 * The code of a run's failure as the partial index `runs_failure_code` holds it (null for a
 * failure that does not parse): the statements that read the index repeat it word for word.
 */
export const FAILURE_CODE = sql<string>`(case when json_valid(failure) then json_extract(failure, '$.code') end)`;
export const PG_FAILURE_CODE = sql<string>`baton_failure_code(failure)`;
