/**
 * Numbered, append-only migrations, written with Kysely's schema builder and compiled to SQL
 * so they run synchronously inside one transaction. Never edit one that has landed: add one.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { FAILURE_CODE } from './compile.js';

/** One migration: its number, a name, and the statements it compiles to. */
export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<Database>): { sql: string }[];
}

const ACTIVE = sql<boolean>`status in ('pending', 'planning', 'executing', 'waiting_human')`;

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'core',
    up: (db) => [
      db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .compile(),
      db.schema
        .createTable('messages')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
        .addColumn('run_id', 'text', (c) => c.references('runs.id'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .compile(),
      db.schema.createIndex('messages_session').on('messages').columns(['session_id', 'id']).compile(),
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
        .addColumn('answer', 'text')
        .addColumn('snapshot', 'text', (c) => c.notNull())
        .addColumn('machine_version', 'integer', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('step_index', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('llm_calls', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tool_calls', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('deadline_at', 'integer')
        .addColumn('owner', 'text')
        .addColumn('lease_until', 'integer')
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .compile(),
      // "At most one active run per session" lives in the database, so it holds across
      // every process that shares the file.
      db.schema
        .createIndex('runs_one_active_per_session')
        .on('runs')
        .column('session_id')
        .unique()
        .where(ACTIVE)
        .compile(),
      db.schema.createIndex('runs_status').on('runs').columns(['status', 'created_at']).compile(),
      db.schema.createIndex('runs_session').on('runs').columns(['session_id', 'created_at']).compile(),
      db.schema
        .createTable('steps')
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('decision', 'text', (c) => c.notNull())
        .addColumn('usage', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
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
        .addColumn('started_at', 'integer')
        .addColumn('finished_at', 'integer')
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
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('decided_at', 'integer')
        .compile(),
      db.schema.createIndex('approvals_run').on('approvals').columns(['run_id', 'status']).compile(),
      db.schema
        .createTable('events')
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('events_pk', ['run_id', 'seq'])
        // Small rows read in key order: clustered by (run_id, seq), with no separate index.
        .modifyEnd(sql`without rowid`)
        .compile(),
      db.schema
        .createTable('artifacts')
        .addColumn('sha256', 'text', (c) => c.primaryKey())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('media_type', 'text', (c) => c.notNull())
        .addColumn('content', 'blob', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .compile(),
    ],
  },
  {
    version: 2,
    name: 'cost and context reports',
    up: (db) => [
      db.schema
        .alterTable('runs')
        .addColumn('cost_usd', 'real', (c) => c.notNull().defaultTo(0))
        .compile(),
      db.schema.alterTable('steps').addColumn('context', 'text').compile(),
    ],
  },
  {
    version: 3,
    name: 'tenants',
    up: (db) => [
      db.schema.alterTable('runs').addColumn('tenant_id', 'text').compile(),
      db.schema.createIndex('runs_tenant').on('runs').columns(['tenant_id', 'created_at']).compile(),
    ],
  },
  {
    version: 4,
    name: 'tool call deadlines',
    up: (db) => [db.schema.alterTable('tool_calls').addColumn('deadline_at', 'integer').compile()],
  },
  {
    version: 5,
    name: 'machine variants and approval votes',
    up: (db) => [
      // Which machine a run's snapshots belong to: runs of one variant are never driven by another.
      db.schema
        .alterTable('runs')
        .addColumn('machine_name', 'text', (c) => c.notNull().defaultTo('baton.run'))
        .compile(),
      // Decisions a variant's machine took without deciding the approval (a first of two approvers).
      db.schema
        .alterTable('approvals')
        .addColumn('votes', 'text', (c) => c.notNull().defaultTo('[]'))
        .compile(),
    ],
  },
  {
    version: 6,
    name: 'list indexes',
    // Every order and filter of `listRuns` reads an index in order and seeks to its cursor:
    // no scan of `runs`, no sort, whatever the number of runs or the depth of the page.
    up: (db) => [
      db.schema.dropIndex('runs_status').compile(),
      db.schema.dropIndex('runs_session').compile(),
      db.schema.dropIndex('runs_tenant').compile(),
      db.schema.createIndex('runs_created').on('runs').columns(['created_at', 'id']).compile(),
      db.schema.createIndex('runs_status').on('runs').columns(['status', 'created_at', 'id']).compile(),
      db.schema.createIndex('runs_session').on('runs').columns(['session_id', 'created_at', 'id']).compile(),
      db.schema.createIndex('runs_tenant').on('runs').columns(['tenant_id', 'created_at', 'id']).compile(),
      db.schema
        .createIndex('runs_tenant_status')
        .on('runs')
        .columns(['tenant_id', 'status', 'created_at', 'id'])
        .compile(),
    ],
  },
  {
    version: 7,
    name: 'wake-ups of waiting runs',
    // A waiting run is not held in memory: `wake_at` says when it must be loaded again (its
    // deadline, a variant's durable delay, or 0 once a decision is committed), and one scheduler
    // reads the earliest from this index.
    up: (db) => [
      db.schema.alterTable('runs').addColumn('wake_at', 'integer').compile(),
      db.schema.createIndex('runs_wake').on('runs').columns(['status', 'wake_at', 'id']).compile(),
      db.schema.createIndex('runs_owner').on('runs').columns(['owner']).compile(),
    ],
  },
  {
    version: 8,
    name: 'lease epochs',
    // How many times a run has been claimed: a write carries the epoch it was claimed with and
    // changes nothing once another worker has claimed the run since (fencing, on PostgreSQL).
    up: (db) => [
      db.schema
        .alterTable('runs')
        .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
        .compile(),
      db.schema.createIndex('runs_lease').on('runs').columns(['lease_until', 'id']).compile(),
    ],
  },
  {
    version: 9,
    name: 'cancel requests',
    // A cancel asked of a run another runtime drives: that runtime reads it with its next lease
    // renewal (or a notification) and cancels the run itself.
    up: (db) => [db.schema.alterTable('runs').addColumn('cancel_requested', 'text').compile()],
  },
  {
    version: 10,
    name: 'retention',
    // Pruning finds a batch of finished runs by when they finished, their session history by run,
    // and the artifacts no remaining run stored; the existing runs' references come from their
    // `artifact` events.
    up: (db) => [
      db.schema
        .createTable('artifact_refs')
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
        .addPrimaryKeyConstraint('artifact_refs_pk', ['sha256', 'run_id'])
        .modifyEnd(sql`without rowid`)
        .compile(),
      db.schema.createIndex('artifact_refs_run').on('artifact_refs').columns(['run_id', 'sha256']).compile(),
      sql`insert or ignore into artifact_refs (sha256, run_id) select json_extract(data, '$.sha256'), run_id from events where type = 'artifact' and json_extract(data, '$.sha256') is not null`.compile(
        db,
      ),
      db.schema.createIndex('runs_finished').on('runs').columns(['status', 'updated_at', 'id']).compile(),
      db.schema.createIndex('messages_run').on('messages').columns(['run_id']).compile(),
    ],
  },
  {
    version: 11,
    name: 'compensation',
    // What a compensating run undid and could not (JSON), for the run's own row.
    up: (db) => [db.schema.alterTable('runs').addColumn('compensation', 'text').compile()],
  },
  {
    version: 12,
    name: 'agents of runs, tool versions of steps',
    // The agent a run belongs to (its name) and a fingerprint of that agent's tools: a runtime
    // drives only runs of its own agent. Runs from before have none and stay every agent's.
    // And each decision's tool versions: a call decided with one version of a tool is not run by
    // another (after a deploy) without a human, unless the tool says the old one is compatible.
    up: (db) => [
      db.schema.alterTable('runs').addColumn('agent', 'text').compile(),
      db.schema.alterTable('runs').addColumn('agent_tools', 'text').compile(),
      db.schema.alterTable('steps').addColumn('tool_versions', 'text').compile(),
    ],
  },
  {
    version: 13,
    name: 'event feed and shared secrets',
    // The feed numbers the events of every run that `GET /v1/events` sends (run.created and
    // state changes) in commit order. SQLite has one writer at a time, so the row's id, taken in
    // its write transaction, is in commit order already and is its position at once (PostgreSQL
    // places rows after they commit instead: see its migration 7; the columns are the same). A
    // trigger fills it, so no writer can forget it; rows go with their events (pruning), and
    // positions are never reused (autoincrement).
    // `baton_secrets` holds random keys created once and shared by every process on the file
    // (the SSE ticket key).
    up: (db) => [
      db.schema
        .createTable('event_feed')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('position', 'integer', (c) => c.unique())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addForeignKeyConstraint('event_feed_event', ['run_id', 'seq'], 'events', ['run_id', 'seq'], (fk) =>
          fk.onDelete('cascade'),
        )
        .compile(),
      db.schema.createIndex('event_feed_event').on('event_feed').columns(['run_id', 'seq']).compile(),
      // Inside a trigger, last_insert_rowid() is the row the trigger just inserted.
      sql`create trigger events_feed after insert on events when new.type in ('run.created', 'state') begin insert into event_feed (run_id, seq) values (new.run_id, new.seq); update event_feed set position = id where id = last_insert_rowid(); end`.compile(
        db,
      ),
      db.schema
        .createTable('baton_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .compile(),
    ],
  },
  {
    version: 14,
    name: 'human waits',
    // Every wait for a person is a row of `approvals`: what it asks (a question and its schema,
    // a budget and its use), the role that may decide it, when it expires and what happens then,
    // and what the decider gave. A call a person edited keeps the model's arguments beside the ones run.
    up: (db) => [
      db.schema.alterTable('approvals').addColumn('request', 'text').compile(),
      db.schema
        .alterTable('approvals')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('approve'))
        .compile(),
      db.schema.alterTable('approvals').addColumn('expires_at', 'integer').compile(),
      db.schema.alterTable('approvals').addColumn('expiry', 'text').compile(),
      db.schema.alterTable('approvals').addColumn('answer', 'text').compile(),
      db.schema.alterTable('tool_calls').addColumn('edited', 'text').compile(),
    ],
  },
  {
    version: 15,
    name: 'forks',
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
    version: 16,
    name: 'child runs',
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
    version: 17,
    name: 'agents of steps',
    // A run's conversation may be handed to another agent (`handoff`): each step names the agent
    // that planned it (null for steps planned before this existed: the run's own agent).
    up: (db) => [db.schema.alterTable('steps').addColumn('agent', 'text').compile()],
  },
  {
    version: 18,
    name: 'versioned memory',
    // A small memory per session and per tenant that agents read and write through built-in
    // tools: every write a new row, its `seq` the memory's version after it (one counter, in
    // commit order), so a read as of a version never changes. Each step records the version its
    // planner read, so a resumed or forked run reads that version again.
    up: (db) => [
      db.schema
        .createTable('memory')
        .addColumn('seq', 'integer', (c) => c.primaryKey())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('tool_call_id', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .compile(),
      db.schema.createIndex('memory_scope_key').on('memory').columns(['scope', 'key', 'seq']).compile(),
      db.schema.alterTable('steps').addColumn('memory_version', 'integer').compile(),
    ],
  },
  {
    version: 19,
    name: 'handles of calls',
    // A call that started work elsewhere that outlives it (an MCP task) saves the handle of that
    // work (JSON) before it waits: after a restart it follows the same work, never starting it again.
    up: (db) => [db.schema.alterTable('tool_calls').addColumn('handle', 'text').compile()],
  },
  {
    version: 20,
    name: 'the feed on the events themselves',
    // The feed's position moves onto the event it numbers (set as the event is inserted, by the
    // statement itself), with a partial index of the feed's events only: a table with two
    // indexes, its autoincrement counter and a trigger's update were ~7 of the ~20 pages each
    // commit of a run wrote. Positions still never go back: `feed_floor` keeps the highest one a
    // prune deleted (it starts at the highest the old table ever gave), and a new position is
    // above both it and every position left. PostgreSQL keeps its `event_feed` (placed after
    // commit: its migration 7).
    up: (db) => [
      db.schema.alterTable('events').addColumn('position', 'integer').compile(),
      sql`update events set position = (select f.position from event_feed f where f.run_id = events.run_id and f.seq = events.seq) where type in ('run.created', 'state')`.compile(
        db,
      ),
      db.schema
        .createTable('feed_floor')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('position', 'integer', (c) => c.notNull())
        .compile(),
      sql`insert into feed_floor (id, position) values (1, coalesce((select seq from sqlite_sequence where name = 'event_feed'), 0))`.compile(
        db,
      ),
      sql`drop trigger events_feed`.compile(db),
      sql`drop table event_feed`.compile(db),
      db.schema
        .createIndex('events_feed')
        .unique()
        .on('events')
        .column('position')
        .where(sql<boolean>`position is not null`)
        .compile(),
    ],
  },
  {
    version: 21,
    name: 'partial indexes of waits and finished runs',
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
    version: 22,
    name: 'session queues',
    // A run started while its session is busy may wait its turn (`onBusy: 'enqueue' | 'interrupt'`):
    // status `queued`, in `queue_order` (its creation time; 0 for one that interrupts, so it goes
    // first). The one-active-run rule stays the unique index's; a trigger hands the session to the
    // head of its queue in the very write that ends its active run, whoever writes it.
    up: (db) => [
      db.schema.alterTable('runs').addColumn('queue_order', 'integer').compile(),
      db.schema
        .createIndex('runs_queue')
        .on('runs')
        .columns(['session_id', 'queue_order', 'created_at', 'id'])
        .where(sql<boolean>`status = 'queued'`)
        .compile(),
      sql`create trigger runs_dequeue after update of status on runs when new.status in ('succeeded', 'failed') and old.status in ('pending', 'planning', 'executing', 'waiting_human') begin update runs set status = 'pending', queue_order = null, updated_at = new.updated_at, version = version + 1 where id = (select q.id from runs q where q.session_id = new.session_id and q.status = 'queued' order by q.queue_order, q.created_at, q.id limit 1); end`.compile(
        db,
      ),
    ],
  },
  {
    version: 23,
    name: 'operator pause',
    // A pause asked of a run by a runtime that may not drive it, kept until the run reaches it.
    up: (db) => [db.schema.alterTable('runs').addColumn('pause_requested', 'text').compile()],
  },
  {
    version: 24,
    name: 'run metadata and tags',
    // What a run is found by: its metadata and tags as search keys in `run_labels`, read in the
    // order of a runs page (`run_labels_search`), and its failure's code on a partial expression
    // index (only failed runs have an entry; the statement repeats `FAILURE_CODE` word for word).
    up: (db) => [
      db.schema.alterTable('runs').addColumn('metadata', 'text').compile(),
      db.schema.alterTable('runs').addColumn('tags', 'text').compile(),
      db.schema
        .createTable('run_labels')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('run_labels_pk', ['run_id', 'label'])
        .compile(),
      db.schema.createIndex('run_labels_search').on('run_labels').columns(['label', 'created_at', 'run_id']).compile(),
      sql`create index runs_failure_code on runs (${FAILURE_CODE}, created_at, id) where failure is not null`.compile(
        db,
      ),
    ],
  },
  {
    version: 25,
    name: 'limit slots and keys',
    // Per-key concurrency and rate limits shared by every runtime on the file: a call takes a
    // slot (a lease its owner renews) and a rate's turn before it starts.
    up: (db) => [
      db.schema
        .createTable('limit_slots')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('slot', 'integer', (c) => c.notNull())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('limit_slots_pk', ['scope', 'slot'])
        .compile(),
      db.schema.createIndex('limit_slots_owner').on('limit_slots').column('owner').compile(),
      db.schema
        .createTable('limit_keys')
        .addColumn('scope', 'text', (c) => c.primaryKey())
        .addColumn('blocked_until', 'integer', (c) => c.notNull())
        .addColumn('strikes', 'integer', (c) => c.notNull())
        .compile(),
    ],
  },
  {
    version: 26,
    name: 'schedules',
    up: (db) => [
      db.schema
        .createTable('schedules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text')
        .addColumn('agent', 'text')
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('spec_hash', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('next_at', 'integer')
        .addColumn('last_tick_at', 'integer')
        .addColumn('last_run_id', 'text')
        .addColumn('runs', 'integer', (c) => c.notNull())
        .addColumn('skipped', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .compile(),
      db.schema.createIndex('schedules_due').on('schedules').columns(['status', 'next_at', 'id']).compile(),
      db.schema.createIndex('schedules_tenant').on('schedules').columns(['tenant_id', 'id']).compile(),
    ],
  },
];
