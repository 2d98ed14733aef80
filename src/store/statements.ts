/**
 * Every statement of the store, built once with Kysely for each dialect. A statement is
 * written as a Kysely query whose values are named parameters (`p('id')`); compiling it for
 * SQLite or PostgreSQL yields its text and the order its parameters go in. SQLite runs the text
 * as a cached better-sqlite3 prepared statement on the synchronous path; PostgreSQL runs it as a
 * named prepared statement through `pg`. The only dialect differences are spelled out where they
 * are (a list of ids: SQLite's `json_each`, PostgreSQL's `any`).
 */
import { sql } from 'kysely';
import {
  ACTIVE,
  argsOf,
  compileStatement,
  IN_FLIGHT,
  nowMs,
  inAgentSet,
  ofAgent,
  WAITING_TERM,
  FAILURE_CODE,
  noActiveRunIn,
  PG_FAILURE_CODE,
  type Build,
  type Compiled,
  type Dialect,
} from './compile.js';
import { LEASE_BUILDS } from './lease-statements.js';
import { LIMIT_BUILDS } from './limit-statements.js';
import { SCHEDULE_BUILDS } from './schedule-statements.js';
import { MEMORY_BUILDS } from './memory-statements.js';
import { PRUNE_BUILDS } from './prune-statements.js';

export { argsOf, compileStatement, type Compiled, type Dialect } from './compile.js';

const RUN_COLUMNS = [
  'id',
  'session_id',
  'status',
  'stop_reason',
  'failure',
  'wait_reason',
  'pending_approval_id',
  'input',
  'context',
  'options',
  'idempotency_key',
  'tenant_id',
  'answer',
  'snapshot',
  'machine_name',
  'machine_version',
  'version',
  'step_index',
  'llm_calls',
  'tool_calls',
  'tokens',
  'cost_usd',
  'deadline_at',
  'wake_at',
  'owner',
  'lease_until',
  'epoch',
  'cancel_requested',
  'pause_requested',
  'compensation',
  'agent',
  'agent_tools',
  'forked_from',
  'fork',
  'parent_run_id',
  'parent_call_id',
  'queue_order',
  'metadata',
  'tags',
  'created_at',
  'updated_at',
] as const;

const TOOL_CALL_COLUMNS = [
  'id',
  'run_id',
  'step_index',
  'call_index',
  'tool',
  'tool_version',
  'effect',
  'args',
  'args_hash',
  'status',
  'result',
  'attempts',
  'started_at',
  'finished_at',
  'deadline_at',
  'edited',
  'copied_from',
  'idempotency_key',
  'child_run_id',
  'handle',
] as const;

const APPROVAL_COLUMNS = [
  'id',
  'run_id',
  'step_index',
  'kind',
  'tool_call_ids',
  'args_hash',
  'status',
  'resolution',
  'decided_by',
  'reason',
  'created_at',
  'decided_at',
  'votes',
  'request',
  'role',
  'expires_at',
  'expiry',
  'answer',
] as const;

function valuesOf<C extends string>(columns: readonly C[], p: <T = never>(name: string) => T): Record<C, never> {
  return Object.fromEntries(columns.map((c) => [c, p(c)])) as Record<C, never>;
}

/** The store's fixed statements. */
const BUILDS = {
  ensureSession: (db, p) =>
    db
      .insertInto('sessions')
      .values({ id: p('id'), created_at: p('now'), updated_at: p('now') })
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ updated_at: eb.ref('excluded.updated_at') }))),
  insertRun: (db, p) => db.insertInto('runs').values(valuesOf(RUN_COLUMNS, p)),
  getRun: (db, p) => db.selectFrom('runs').selectAll().where('id', '=', p('id')),
  findRunByIdempotencyKey: (db, p) => db.selectFrom('runs').selectAll().where('idempotency_key', '=', p('key')),
  /**
   * The head of a session's queue made `pending` (its machine to be started by whoever claims
   * it), if the session has no active run: after a run is enqueued, and by the claim loop's sweep.
   * The runs' own trigger (migration 22) does the same when a session's active run ends.
   */
  promoteQueueHead: (db, p) =>
    db
      .updateTable('runs')
      .set({ status: 'pending', queue_order: null, updated_at: p('now'), version: sql`version + 1` })
      .where(
        'id',
        '=',
        db
          .selectFrom('runs as q')
          .select('q.id')
          .where('q.session_id', '=', p('session_id'))
          .where(sql<boolean>`q.status = 'queued'`)
          // A run started with `startAt` waits for its instant (its `wake_at`) as well as its turn.
          .where((eb) => eb.or([eb('q.wake_at', 'is', null), eb('q.wake_at', '<=', p('now'))]))
          .orderBy('q.queue_order')
          .orderBy('q.created_at')
          .orderBy('q.id')
          .limit(1),
      )
      .where(noActiveRunIn(p('session_id'))),
  /** Sessions with a queue and no active run (a queue no run's end handed on): for the sweep. */
  orphanQueues: (db, p) =>
    db
      .selectFrom('runs as q')
      .select('q.session_id')
      .distinct()
      .where(sql<boolean>`q.status = 'queued'`)
      .where((eb) => eb.or([eb('q.wake_at', 'is', null), eb('q.wake_at', '<=', p('now'))]))
      .where(noActiveRunIn(sql.ref('q.session_id')))
      .limit(p('limit')),
  /** The soonest instant a run started with `startAt` is due (its `wake_at`), if one waits. */
  nextDelayedStart: (db) =>
    db
      .selectFrom('runs')
      .select((eb) => eb.fn.min('wake_at').as('at'))
      .where(sql<boolean>`status = 'queued'`)
      .where('wake_at', 'is not', null),
  activeRunOfSession: (db, p) =>
    db.selectFrom('runs').selectAll().where('session_id', '=', p('session_id')).where('status', 'in', ACTIVE),
  saveProgress: (db, p, dialect) =>
    db
      .updateTable('runs')
      .set({
        snapshot: p('snapshot'),
        status: p('status'),
        stop_reason: p('stop_reason'),
        failure: p('failure'),
        wait_reason: p('wait_reason'),
        pending_approval_id: p('pending_approval_id'),
        step_index: p('step_index'),
        llm_calls: p('llm_calls'),
        tool_calls: p('tool_calls'),
        tokens: p('tokens'),
        cost_usd: p('cost_usd'),
        updated_at: p('updated_at'),
        machine_version: p('machine_version'),
        compensation: p('compensation'),
        // Moved only by a person who gives a run more time (`extend` of a budget wait).
        deadline_at: p('deadline_at'),
        // A committed decision (0) stands until the run leaves the wait it decides.
        wake_at: sql`case when wake_at = 0 and ${p('status')} = 'waiting_human' then 0 else cast(${p('wake_at')} as ${sql.raw(dialect === 'postgres' ? 'bigint' : 'integer')}) end`,
        version: sql`version + 1`,
      })
      .where('id', '=', p('id'))
      .where('version', '=', p('expected_version')),
  setAnswer: (db, p) =>
    db
      .updateTable('runs')
      .set({ answer: p('answer') })
      .where('id', '=', p('id')),
  runIdsWithStatusNotIn: (db, p, dialect) =>
    db
      .selectFrom('runs')
      .select('id')
      .where(
        sql<boolean>`status not in ${
          dialect === 'sqlite'
            ? sql`(select value from json_each(${p('statuses')}))`
            : sql`(select unnest(${p('statuses')}::text[]))`
        }`,
      ),
  /** Runs in flight of agents the set `agent` does not name that no live lease holds: no process of theirs drives them. */
  orphansOfOtherAgents: (db, p, dialect) =>
    db
      .selectFrom('runs')
      .select(['id', 'agent'])
      .where('status', 'in', IN_FLIGHT)
      .where('agent', 'is not', null)
      .where(sql<boolean>`not ${inAgentSet(p)}`)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowMs(p, dialect))]))
      .orderBy('id')
      .limit(p('limit')),
  inFlightRunIds: (db) =>
    db.selectFrom('runs').select('id').where('status', 'in', IN_FLIGHT).orderBy('created_at').orderBy('id'),
  waitingRunsPage: (db, p) =>
    db
      .selectFrom('runs')
      .selectAll()
      .where('status', '=', 'waiting_human')
      .where(sql<boolean>`(created_at, id) > (${p('after_created_at')}, ${p('after_id')})`)
      .orderBy('created_at')
      .orderBy('id')
      .limit(p('limit')),
  dueWaitingRuns: (db, p) =>
    db
      .selectFrom('runs')
      .select(['id', 'wake_at'])
      .where(WAITING_TERM)
      .where('wake_at', '<=', p('now'))
      .where(ofAgent(p))
      .where(sql<boolean>`(wake_at, id) > (${p('after_wake_at')}, ${p('after_id')})`)
      .orderBy('wake_at')
      .orderBy('id')
      .limit(p('limit')),
  nextWake: (db, p) =>
    db
      .selectFrom('runs')
      .select((eb) => eb.fn.min('wake_at').as('at'))
      .where(WAITING_TERM)
      .where('wake_at', '>', p('now'))
      .where(ofAgent(p)),
  setWakeAt: (db, p) =>
    db
      .updateTable('runs')
      .set({ wake_at: p('at') })
      .where('id', '=', p('id')),
  /** A cancel asked of an active run (a child whose parent ended); a waiting one is due at once, to carry it out. */
  askCancel: (db, p) =>
    db
      .updateTable('runs')
      .set({
        cancel_requested: p('request'),
        wake_at: sql`case when status = 'waiting_human' then 0 else wake_at end`,
      })
      .where('id', '=', p('id'))
      .where('status', 'in', ACTIVE),
  /** The pause asked of a run is reached: its request is taken, with the write that enters the pause. */
  takePauseRequest: (db, p) => db.updateTable('runs').set({ pause_requested: null }).where('id', '=', p('id')),
  /** A run's search key (a metadata entry, a tag), written with the run. */
  insertLabel: (db, p) =>
    db.insertInto('run_labels').values({ run_id: p('run_id'), label: p('label'), created_at: p('created_at') }),
  insertStep: (db, p) =>
    db
      .insertInto('steps')
      .values(
        valuesOf(
          [
            'run_id',
            'step_index',
            'decision',
            'usage',
            'context',
            'tool_versions',
            'agent',
            'memory_version',
            'created_at',
          ] as const,
          p,
        ),
      ),
  listSteps: (db, p) => db.selectFrom('steps').selectAll().where('run_id', '=', p('run_id')).orderBy('step_index'),

  getToolCall: (db, p) => db.selectFrom('tool_calls').selectAll().where('id', '=', p('id')),
  putToolCall: (db, p) =>
    db
      .insertInto('tool_calls')
      .values(valuesOf(TOOL_CALL_COLUMNS, p))
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          status: eb.ref('excluded.status'),
          result: eb.ref('excluded.result'),
          attempts: eb.ref('excluded.attempts'),
          started_at: eb.ref('excluded.started_at'),
          finished_at: eb.ref('excluded.finished_at'),
          deadline_at: eb.ref('excluded.deadline_at'),
          edited: eb.ref('excluded.edited'),
          copied_from: eb.ref('excluded.copied_from'),
          idempotency_key: eb.ref('excluded.idempotency_key'),
          child_run_id: eb.ref('excluded.child_run_id'),
          handle: eb.ref('excluded.handle'),
        })),
      ),
  listToolCalls: (db, p) =>
    db
      .selectFrom('tool_calls')
      .selectAll()
      .where('run_id', '=', p('run_id'))
      .orderBy('step_index')
      .orderBy('call_index'),

  insertApproval: (db, p) => db.insertInto('approvals').values(valuesOf(APPROVAL_COLUMNS, p)),
  getApproval: (db, p) => db.selectFrom('approvals').selectAll().where('id', '=', p('id')),
  decideApproval: (db, p) =>
    db
      .updateTable('approvals')
      .set({
        status: p('status'),
        resolution: p('resolution'),
        decided_by: p('by'),
        reason: p('reason'),
        decided_at: p('at'),
        answer: p('answer'),
        args_hash: p('args_hash'),
      })
      .where('id', '=', p('id'))
      .where('status', '=', 'pending'),
  escalateApproval: (db, p) =>
    db
      .updateTable('approvals')
      .set({ role: p('role'), expires_at: p('expires_at'), expiry: p('expiry') })
      .where('id', '=', p('id'))
      .where('status', '=', 'pending'),
  setApprovalVotes: (db, p) =>
    db
      .updateTable('approvals')
      .set({ votes: p('votes') })
      .where('id', '=', p('id'))
      .where('status', '=', 'pending'),
  listApprovals: (db, p) =>
    db.selectFrom('approvals').selectAll().where('run_id', '=', p('run_id')).orderBy('created_at').orderBy('id'),

  /**
   * On SQLite a `run.created` or `state` event takes its feed position as it goes in: above every
   * position left and above the floor a prune left (the file has one writer at a time, so the
   * order is the commit order).
   */
  insertEvent: (db, p, dialect) =>
    dialect === 'sqlite'
      ? db.insertInto('events').values({
          ...valuesOf(['run_id', 'seq', 'type', 'data', 'created_at'] as const, p),
          position: sql<
            number | null
          >`case when ${p('type')} in ('run.created', 'state') then max(coalesce((select max(position) from events where position is not null), 0), (select position from feed_floor where id = 1)) + 1 end`,
        })
      : db.insertInto('events').values(valuesOf(['run_id', 'seq', 'type', 'data', 'created_at'] as const, p)),
  /** A run's events of one type, in order (its `artifact` events: what it stored). */
  eventsOfType: (db, p) =>
    db.selectFrom('events').selectAll().where('run_id', '=', p('run_id')).where('type', '=', p('type')).orderBy('seq'),
  listEvents: (db, p) =>
    db
      .selectFrom('events')
      .selectAll()
      .where('run_id', '=', p('run_id'))
      .where('seq', '>', p('after'))
      .orderBy('seq')
      .limit(p('limit')),
  lastSeq: (db, p) =>
    db
      .selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .where('run_id', '=', p('run_id')),

  /** The feed after a position, in order: every run's (`readFeedOfTenant`: one tenant's runs'). */
  readFeed: (db, p, dialect) => (dialect === 'sqlite' ? sqliteFeedQuery(db, p) : feedQuery(db, p)),
  readFeedOfTenant: (db, p, dialect) =>
    dialect === 'sqlite'
      ? // A cross join keeps SQLite walking the feed in order (the tenant's rows filtered out of it),
        // not gathering every event of the tenant's runs to sort them.
        sqliteFeedQuery(db, p)
          .crossJoin('runs as r')
          .whereRef('r.id', '=', 'e.run_id')
          .where('r.tenant_id', '=', p('tenant_id'))
      : feedQuery(db, p).innerJoin('runs as r', 'r.id', 'f.run_id').where('r.tenant_id', '=', p('tenant_id')),
  /** The highest position placed so far (null on an empty feed). */
  feedHead: (db, _p, dialect) =>
    dialect === 'sqlite'
      ? db
          .selectFrom('events')
          .select((eb) => eb.fn.max('position').as('position'))
          .where('position', 'is not', null)
      : db.selectFrom('event_feed').select((eb) => eb.fn.max('position').as('position')),
  /** Creates a named secret unless one exists (the first process to ask wins). */
  putSecret: (db, p) =>
    db
      .insertInto('baton_secrets')
      .values(valuesOf(['name', 'value', 'created_at'] as const, p))
      .onConflict((oc) => oc.column('name').doNothing()),
  getSecret: (db, p) => db.selectFrom('baton_secrets').select('value').where('name', '=', p('name')),

  putArtifact: (db, p) =>
    db
      .insertInto('artifacts')
      .values(valuesOf(['sha256', 'size', 'media_type', 'content', 'created_at'] as const, p))
      .onConflict((oc) => oc.column('sha256').doNothing()),
  putArtifactRef: (db, p) =>
    db
      .insertInto('artifact_refs')
      .values(valuesOf(['sha256', 'run_id'] as const, p))
      .onConflict((oc) => oc.doNothing()),
  getArtifact: (db, p) => db.selectFrom('artifacts').selectAll().where('sha256', '=', p('sha256')),

  insertMessage: (db, p) =>
    db.insertInto('messages').values(valuesOf(['session_id', 'run_id', 'role', 'content', 'created_at'] as const, p)),
  listMessages: (db, p) =>
    db.selectFrom('messages').selectAll().where('session_id', '=', p('session_id')).orderBy('id'),
  ...MEMORY_BUILDS,
  ...LEASE_BUILDS,
  ...LIMIT_BUILDS,
  ...SCHEDULE_BUILDS,
  ...PRUNE_BUILDS,
} satisfies Record<string, Build>;

export type StatementName = keyof typeof BUILDS;

/** SQLite's feed: the events that have a position, by it (the partial index `events_feed`). */
function sqliteFeedQuery(db: Parameters<Build>[0], p: Parameters<Build>[1]) {
  return db
    .selectFrom('events as e')
    .select(['e.position', 'e.run_id', 'e.seq', 'e.type', 'e.data', 'e.created_at'])
    .where('e.position', '>', p('after'))
    .orderBy('e.position')
    .limit(p('limit'));
}

function feedQuery(db: Parameters<Build>[0], p: Parameters<Build>[1]) {
  return db
    .selectFrom('event_feed as f')
    .innerJoin('events as e', (join) => join.onRef('e.run_id', '=', 'f.run_id').onRef('e.seq', '=', 'f.seq'))
    .select(['f.position', 'e.run_id', 'e.seq', 'e.type', 'e.data', 'e.created_at'])
    .where('f.position', '>', p('after'))
    .orderBy('f.position')
    .limit(p('limit'));
}
export type Catalog = Record<StatementName, Compiled>;

const catalogs: Partial<Record<Dialect, Catalog>> = {};

/** The store's statements compiled for `dialect` (once per process). */
export function catalog(dialect: Dialect): Catalog {
  return (catalogs[dialect] ??= Object.fromEntries(
    Object.entries(BUILDS).map(([name, build]) => [name, compileStatement(name, dialect, build as Build)]),
  ) as Catalog);
}

/** Filter for the list statement. */
export interface ListShape {
  status: boolean;
  session: boolean;
  tenant: boolean;
  forkedFrom: boolean;
  parent: boolean;
  cursor: boolean;
  /** How many search keys (`run_labels`) the runs must all have: the first one drives the page. */
  labels: number;
  failureCode: boolean;
  createdAfter: boolean;
  createdBefore: boolean;
}

const listCache = new Map<string, Compiled>();

/**
 * The statement of a runs page: newest first by `(created_at, id)`, each filter an equality on an
 * index's leading columns, the cursor a row-value seek (the index is entered at the cursor
 * instead of scanned up to it), the creation bounds a range on the same columns. With search
 * keys, the page is read from `run_labels_search` (the first key's entries, in page order) and
 * the others are looked up by their primary key; a failure code reads `runs_failure_code`.
 * One compiled statement per dialect and filter shape.
 */
export function listRunsStatement(dialect: Dialect, shape: ListShape): Compiled {
  const key = `listRuns_${dialect}_${[
    shape.status,
    shape.session,
    shape.tenant,
    shape.forkedFrom,
    shape.parent,
    shape.cursor,
    shape.failureCode,
    shape.createdAfter,
    shape.createdBefore,
  ]
    .map(Number)
    .join('')}_${shape.labels}`;
  let compiled = listCache.get(key);
  if (!compiled) {
    compiled = compileStatement(key, dialect, (db, p) => {
      // The columns the page is ordered and sought by: the run's, or its first search key's.
      const [at, id] =
        shape.labels > 0
          ? [sql.ref('l0.created_at'), sql.ref('l0.run_id')]
          : [sql.ref('runs.created_at'), sql.ref('runs.id')];
      let query =
        shape.labels > 0
          ? db
              .selectFrom('run_labels as l0')
              .innerJoin('runs', 'runs.id', 'l0.run_id')
              .selectAll('runs')
              .where('l0.label', '=', p('label0'))
          : db.selectFrom('runs').selectAll('runs');
      for (let i = 1; i < shape.labels; i += 1) {
        query = query.where(
          sql<boolean>`exists (select 1 from run_labels l where l.run_id = runs.id and l.label = ${p(`label${i}`)})`,
        );
      }
      if (shape.status) query = query.where('runs.status', '=', p('status'));
      if (shape.session) query = query.where('runs.session_id', '=', p('session_id'));
      if (shape.tenant) query = query.where('runs.tenant_id', '=', p('tenant_id'));
      if (shape.forkedFrom) query = query.where('runs.forked_from', '=', p('forked_from'));
      if (shape.parent) query = query.where('runs.parent_run_id', '=', p('parent_run_id'));
      if (shape.failureCode) {
        // The partial index's own condition and expression, word for word.
        query = query
          .where(sql<boolean>`failure is not null`)
          .where(sql<boolean>`${dialect === 'postgres' ? PG_FAILURE_CODE : FAILURE_CODE} = ${p('failure_code')}`);
      }
      if (shape.createdAfter) query = query.where(sql<boolean>`${at} >= ${p('created_after')}`);
      if (shape.createdBefore) query = query.where(sql<boolean>`${at} < ${p('created_before')}`);
      if (shape.cursor) query = query.where(sql<boolean>`(${at}, ${id}) < (${p('at')}, ${p('cursor_id')})`);
      return query.orderBy(at, 'desc').orderBy(id, 'desc').limit(p('limit'));
    });
    listCache.set(key, compiled);
  }
  return compiled;
}

/** The statement and arguments of a runs page for a filter. */
export function listRunsQuery(
  dialect: Dialect,
  filter: {
    status?: string | undefined;
    sessionId?: string | undefined;
    tenantId?: string | undefined;
    forkedFrom?: string | undefined;
    parentRunId?: string | undefined;
    labels?: readonly string[] | undefined;
    failureCode?: string | undefined;
    createdAfter?: number | undefined;
    createdBefore?: number | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  },
): { statement: Compiled; args: unknown[] } {
  const labels = filter.labels ?? [];
  const statement = listRunsStatement(dialect, {
    status: Boolean(filter.status),
    session: Boolean(filter.sessionId),
    tenant: Boolean(filter.tenantId),
    forkedFrom: Boolean(filter.forkedFrom),
    parent: Boolean(filter.parentRunId),
    cursor: Boolean(filter.cursor),
    labels: labels.length,
    failureCode: filter.failureCode !== undefined,
    createdAfter: filter.createdAfter !== undefined,
    createdBefore: filter.createdBefore !== undefined,
  });
  const values: Record<string, unknown> = {
    status: filter.status,
    session_id: filter.sessionId,
    tenant_id: filter.tenantId,
    forked_from: filter.forkedFrom,
    parent_run_id: filter.parentRunId,
    failure_code: filter.failureCode,
    created_after: filter.createdAfter,
    created_before: filter.createdBefore,
    limit: filter.limit ?? 50,
  };
  labels.forEach((label, i) => (values[`label${i}`] = label));
  if (filter.cursor) {
    const at = filter.cursor.indexOf(':');
    values.at = Number(filter.cursor.slice(0, at));
    values.cursor_id = filter.cursor.slice(at + 1);
  }
  return { statement, args: argsOf(statement, values) };
}
