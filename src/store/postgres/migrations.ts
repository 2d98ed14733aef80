/**
 * The Baton schema on PostgreSQL, numbered and append-only like SQLite's (`../migrations.ts`).
 * Postgres starts at the schema SQLite reached at its migration 7, in Postgres types:
 * millisecond times and counters that can pass 2^31 are `bigint` (read back as numbers, see
 * `open-postgres.ts`), money is `double precision`, bytes are `bytea`, message ids an identity.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { PG_FAILURE_CODE } from '../compile.js';

/** One Postgres migration: its number, a name, and the statements it runs, in order. */
export interface PostgresMigration {
  version: number;
  name: string;
  up(db: Kysely<Database>): { sql: string; parameters: readonly unknown[] }[];
}

const ACTIVE = sql<boolean>`status in ('pending', 'planning', 'executing', 'waiting_human')`;

/** Every Postgres migration, in order. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'the schema of SQLite migration 7',
    up: (db) => [
      db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .compile(),
      db.schema
        .createTable('runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('stop_reason', 'text')
        .addColumn('failure', 'text')
        .addColumn('wait_reason', 'text')
        .addColumn('pending_approval_id', 'text')
        .addColumn('input', 'text', (c) => c.notNull())
        .addColumn('context', 'text', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull())
        .addColumn('idempotency_key', 'text', (c) => c.unique())
        .addColumn('tenant_id', 'text')
        .addColumn('answer', 'text')
        .addColumn('snapshot', 'text', (c) => c.notNull())
        .addColumn('machine_name', 'text', (c) => c.notNull().defaultTo('baton.run'))
        .addColumn('machine_version', 'integer', (c) => c.notNull())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .addColumn('step_index', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('llm_calls', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tool_calls', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('cost_usd', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('deadline_at', 'bigint')
        .addColumn('wake_at', 'bigint')
        .addColumn('owner', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .compile(),
      db.schema
        .createIndex('runs_one_active_per_session')
        .on('runs')
        .column('session_id')
        .unique()
        .where(ACTIVE)
        .compile(),
      db.schema.createIndex('runs_created').on('runs').columns(['created_at', 'id']).compile(),
      db.schema.createIndex('runs_status').on('runs').columns(['status', 'created_at', 'id']).compile(),
      db.schema.createIndex('runs_session').on('runs').columns(['session_id', 'created_at', 'id']).compile(),
      db.schema.createIndex('runs_tenant').on('runs').columns(['tenant_id', 'created_at', 'id']).compile(),
      db.schema
        .createIndex('runs_tenant_status')
        .on('runs')
        .columns(['tenant_id', 'status', 'created_at', 'id'])
        .compile(),
      db.schema.createIndex('runs_wake').on('runs').columns(['status', 'wake_at', 'id']).compile(),
      db.schema.createIndex('runs_owner').on('runs').columns(['owner']).compile(),
      db.schema
        .createTable('messages')
        .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
        .addColumn('run_id', 'text', (c) => c.references('runs.id'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .compile(),
      db.schema.createIndex('messages_session').on('messages').columns(['session_id', 'id']).compile(),
      db.schema
        .createTable('steps')
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('decision', 'text', (c) => c.notNull())
        .addColumn('usage', 'text', (c) => c.notNull())
        .addColumn('context', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('steps_pk', ['run_id', 'step_index'])
        .compile(),
      db.schema
        .createTable('tool_calls')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('call_index', 'integer', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('tool_version', 'text')
        .addColumn('effect', 'text')
        .addColumn('args', 'text', (c) => c.notNull())
        .addColumn('args_hash', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('started_at', 'bigint')
        .addColumn('finished_at', 'bigint')
        .addColumn('deadline_at', 'bigint')
        .addUniqueConstraint('tool_calls_position', ['run_id', 'step_index', 'call_index'])
        .compile(),
      db.schema
        .createTable('approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('tool_call_ids', 'text', (c) => c.notNull())
        .addColumn('args_hash', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('resolution', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('reason', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('decided_at', 'bigint')
        .addColumn('votes', 'text', (c) => c.notNull().defaultTo('[]'))
        .compile(),
      db.schema.createIndex('approvals_run').on('approvals').columns(['run_id', 'status']).compile(),
      db.schema
        .createTable('events')
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('events_pk', ['run_id', 'seq'])
        .compile(),
      db.schema
        .createTable('artifacts')
        .addColumn('sha256', 'text', (c) => c.primaryKey())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('media_type', 'text', (c) => c.notNull())
        .addColumn('content', 'bytea', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .compile(),
    ],
  },
  {
    version: 2,
    name: 'lease epochs (SQLite migration 8)',
    up: (db) => [
      db.schema
        .alterTable('runs')
        .addColumn('epoch', 'bigint', (c) => c.notNull().defaultTo(0))
        .compile(),
      // Claims order by lease expiry: ordering by id would re-scan every leased row.
      db.schema.createIndex('runs_lease').on('runs').columns(['lease_until', 'id']).compile(),
    ],
  },
  {
    version: 3,
    name: 'cancel requests (SQLite migration 9)',
    up: (db) => [db.schema.alterTable('runs').addColumn('cancel_requested', 'text').compile()],
  },
  {
    version: 4,
    name: 'retention (SQLite migration 10)',
    up: (db) => [
      db.schema
        .createTable('artifact_refs')
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addPrimaryKeyConstraint('artifact_refs_pk', ['sha256', 'run_id'])
        .compile(),
      db.schema.createIndex('artifact_refs_run').on('artifact_refs').columns(['run_id', 'sha256']).compile(),
      sql`insert into artifact_refs (sha256, run_id) select distinct data::json ->> 'sha256', run_id from events where type = 'artifact' and data::json ->> 'sha256' is not null on conflict do nothing`.compile(
        db,
      ),
      db.schema.createIndex('runs_finished').on('runs').columns(['status', 'updated_at', 'id']).compile(),
      db.schema.createIndex('messages_run').on('messages').columns(['run_id']).compile(),
    ],
  },
  {
    version: 5,
    name: 'compensation (SQLite migration 11)',
    up: (db) => [db.schema.alterTable('runs').addColumn('compensation', 'text').compile()],
  },
  {
    version: 6,
    name: 'agents of runs, tool versions of steps (SQLite migration 12)',
    up: (db) => [
      db.schema.alterTable('runs').addColumn('agent', 'text').compile(),
      db.schema.alterTable('runs').addColumn('agent_tools', 'text').compile(),
      db.schema.alterTable('steps').addColumn('tool_versions', 'text').compile(),
    ],
  },
  {
    version: 7,
    name: 'event feed and shared secrets (SQLite migration 13)',
    // A position taken inside a write transaction is not in commit order here (transactions
    // commit concurrently), so the trigger inserts the feed row without one, and readers give
    // positions later (`assignFeed`): one at a time under an advisory lock, to rows already
    // committed, in insertion order. A reader that has seen position p never sees a new row below p.
    up: (db) => [
      db.schema
        .createTable('event_feed')
        .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
        .addColumn('position', 'bigint', (c) => c.unique())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addForeignKeyConstraint('event_feed_event', ['run_id', 'seq'], 'events', ['run_id', 'seq'], (fk) =>
          fk.onDelete('cascade'),
        )
        .compile(),
      db.schema.createIndex('event_feed_event').on('event_feed').columns(['run_id', 'seq']).compile(),
      db.schema
        .createIndex('event_feed_unplaced')
        .on('event_feed')
        .column('id')
        .where(sql<boolean>`position is null`)
        .compile(),
      sql`create function baton_event_feed() returns trigger language plpgsql as $$ begin insert into event_feed (run_id, seq) values (new.run_id, new.seq); return null; end $$`.compile(
        db,
      ),
      sql`create trigger events_feed after insert on events for each row when (new.type in ('run.created', 'state')) execute function baton_event_feed()`.compile(
        db,
      ),
      db.schema
        .createTable('baton_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .compile(),
    ],
  },
  {
    version: 8,
    name: 'human waits (SQLite migration 14)',
    up: (db) => [
      db.schema.alterTable('approvals').addColumn('request', 'text').compile(),
      db.schema
        .alterTable('approvals')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('approve'))
        .compile(),
      db.schema.alterTable('approvals').addColumn('expires_at', 'bigint').compile(),
      db.schema.alterTable('approvals').addColumn('expiry', 'text').compile(),
      db.schema.alterTable('approvals').addColumn('answer', 'text').compile(),
      db.schema.alterTable('tool_calls').addColumn('edited', 'text').compile(),
    ],
  },
  {
    version: 9,
    name: 'forks (SQLite migration 15)',
    // A fork is a run made from another's first steps (`runtime.fork`): the source's id, indexed
    // for a source's forks, and the terms it was made with (JSON: the step, repeat_effects, a given
    // decision). A ledger row copied from the source names the row it was copied from, and a call
    // that reuses another call's idempotency key (a copy, or a fork's repeat of an idempotent
    // call) stores that key; null means the call's own id.
    up: (db) => [
      db.schema.alterTable('runs').addColumn('forked_from', 'text').compile(),
      db.schema.alterTable('runs').addColumn('fork', 'text').compile(),
      db.schema
        .createIndex('runs_forked_from')
        .on('runs')
        .columns(['forked_from', 'created_at', 'id'])
        .where(sql<boolean>`forked_from is not null`)
        .compile(),
      db.schema.alterTable('tool_calls').addColumn('copied_from', 'text').compile(),
      db.schema.alterTable('tool_calls').addColumn('idempotency_key', 'text').compile(),
    ],
  },
  {
    version: 10,
    name: 'child runs (SQLite migration 16)',
    // An agent called as a tool starts a child run: the child names its parent and the parent's
    // call (its id is derived from that call's), indexed for a parent's children; the call's
    // ledger row names the child it started.
    up: (db) => [
      db.schema.alterTable('runs').addColumn('parent_run_id', 'text').compile(),
      db.schema.alterTable('runs').addColumn('parent_call_id', 'text').compile(),
      db.schema
        .createIndex('runs_parent')
        .on('runs')
        .columns(['parent_run_id', 'created_at', 'id'])
        .where(sql<boolean>`parent_run_id is not null`)
        .compile(),
      db.schema.alterTable('tool_calls').addColumn('child_run_id', 'text').compile(),
    ],
  },
  {
    version: 11,
    name: 'agents of steps (SQLite migration 17)',
    // A run's conversation may be handed to another agent (`handoff`): each step names the agent
    // that planned it (null for steps planned before this existed: the run's own agent).
    up: (db) => [db.schema.alterTable('steps').addColumn('agent', 'text').compile()],
  },
  {
    version: 12,
    name: 'versioned memory (SQLite migration 18)',
    // A small memory per session and per tenant that agents read and write through built-in
    // tools: every write a new row, its \`seq\` the memory's version after it (one counter, in
    // commit order), so a read as of a version never changes. Each step records the version its
    // planner read, so a resumed or forked run reads that version again.
    up: (db) => [
      db.schema
        .createTable('memory')
        .addColumn('seq', 'bigint', (c) => c.primaryKey())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('tool_call_id', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .compile(),
      db.schema.createIndex('memory_scope_key').on('memory').columns(['scope', 'key', 'seq']).compile(),
      db.schema.alterTable('steps').addColumn('memory_version', 'bigint').compile(),
    ],
  },
  {
    version: 13,
    name: 'handles of calls (SQLite migration 19)',
    // A call that started work elsewhere that outlives it (an MCP task) saves the handle of that
    // work (JSON) before it waits: after a restart it follows the same work, never starting it again.
    up: (db) => [db.schema.alterTable('tool_calls').addColumn('handle', 'text').compile()],
  },
  {
    version: 14,
    name: 'partial indexes of waits and finished runs (SQLite migration 21)',
    // A run in flight changes its status and `updated_at` at every step: kept in `runs_wake` and
    // `runs_finished`, each step of each run rewrote an entry of both (~20 of the ~110 pages a
    // model-like run wrote to SQLite's log). Each index now holds only the runs it serves: those
    // waiting (by when they are due), those finished (by when they ended). The statements that
    // read them repeat the index's condition word for word (`WAITING_TERM`, `FINISHED_TERM`),
    // as the planner needs to use a partial index.
    up: (db) => [
      sql`drop index runs_wake`.compile(db),
      db.schema
        .createIndex('runs_wake')
        .on('runs')
        .columns(['status', 'wake_at', 'id'])
        .where(sql<boolean>`status = 'waiting_human'`)
        .compile(),
      sql`drop index runs_finished`.compile(db),
      db.schema
        .createIndex('runs_finished')
        .on('runs')
        .columns(['status', 'updated_at', 'id'])
        .where(sql<boolean>`status in ('succeeded', 'failed')`)
        .compile(),
    ],
  },
  {
    version: 15,
    name: 'session queues (SQLite migration 22)',
    // As SQLite's: `queued` runs in `queue_order`, and a trigger that hands the session to the head
    // of its queue in the write that ends its active run. (It takes no lock of the session: a start
    // in that session waits on the ending run's index entry, and would wait on it in turn. A run
    // enqueued in the very moment the active one ends, each unseen by the other, is moved by the
    // claim loop's sweep.)
    up: (db) => [
      db.schema.alterTable('runs').addColumn('queue_order', 'bigint').compile(),
      db.schema
        .createIndex('runs_queue')
        .on('runs')
        .columns(['session_id', 'queue_order', 'created_at', 'id'])
        .where(sql<boolean>`status = 'queued'`)
        .compile(),
      sql`create function baton_dequeue() returns trigger language plpgsql as $$ begin update runs set status = 'pending', queue_order = null, updated_at = new.updated_at, version = version + 1 where id = (select q.id from runs q where q.session_id = new.session_id and q.status = 'queued' order by q.queue_order, q.created_at, q.id limit 1); if found then perform pg_notify('baton_runs', ''); end if; return null; end $$`.compile(
        db,
      ),
      sql`create trigger runs_dequeue after update of status on runs for each row when (new.status in ('succeeded', 'failed') and old.status in ('pending', 'planning', 'executing', 'waiting_human')) execute function baton_dequeue()`.compile(
        db,
      ),
    ],
  },
  {
    version: 16,
    name: 'operator pause (SQLite migration 23)',
    up: (db) => [db.schema.alterTable('runs').addColumn('pause_requested', 'text').compile()],
  },
  {
    version: 17,
    name: 'run metadata and tags (SQLite migration 24)',
    up: (db) => [
      db.schema.alterTable('runs').addColumn('metadata', 'text').compile(),
      db.schema.alterTable('runs').addColumn('tags', 'text').compile(),
      db.schema
        .createTable('run_labels')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('run_labels_pk', ['run_id', 'label'])
        .compile(),
      db.schema.createIndex('run_labels_search').on('run_labels').columns(['label', 'created_at', 'run_id']).compile(),
      // A failure column that does not parse (a damaged row) has no code rather than failing the write.
      sql`create function baton_failure_code(failure text) returns text language plpgsql immutable as $$ begin return failure::jsonb ->> 'code'; exception when others then return null; end $$`.compile(
        db,
      ),
      sql`create index runs_failure_code on runs (${PG_FAILURE_CODE}, created_at, id) where failure is not null`.compile(
        db,
      ),
    ],
  },
  {
    version: 18,
    name: 'limit slots and keys (SQLite migration 25)',
    up: (db) => [
      db.schema
        .createTable('limit_slots')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('slot', 'integer', (c) => c.notNull())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('limit_slots_pk', ['scope', 'slot'])
        .compile(),
      db.schema.createIndex('limit_slots_owner').on('limit_slots').column('owner').compile(),
      db.schema
        .createTable('limit_keys')
        .addColumn('scope', 'text', (c) => c.primaryKey())
        .addColumn('blocked_until', 'bigint', (c) => c.notNull())
        .addColumn('strikes', 'integer', (c) => c.notNull())
        .compile(),
    ],
  },
  {
    version: 19,
    name: 'schedules (SQLite migration 26)',
    up: (db) => [
      db.schema
        .createTable('schedules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text')
        .addColumn('agent', 'text')
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('spec_hash', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('next_at', 'bigint')
        .addColumn('last_tick_at', 'bigint')
        .addColumn('last_run_id', 'text')
        .addColumn('runs', 'integer', (c) => c.notNull())
        .addColumn('skipped', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .compile(),
      db.schema.createIndex('schedules_due').on('schedules').columns(['status', 'next_at', 'id']).compile(),
      db.schema.createIndex('schedules_tenant').on('schedules').columns(['tenant_id', 'id']).compile(),
    ],
  },
];
