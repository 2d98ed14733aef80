import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, createSqliteStore, openDatabase } from '../../src/store/index.js';
import { tempFiles } from '../helpers/temp.js';
import { runProgress, runRow } from '../helpers/run-row.js';

describe('openDatabase', () => {
  it('opens with WAL, synchronous=FULL, foreign keys and a busy timeout', () => {
    const { db } = tempFiles();
    const { sqlite } = openDatabase(db);
    expect(sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(sqlite.pragma('synchronous', { simple: true })).toBe(2);
    expect(sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqlite.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    sqlite.close();
  });

  it('applies each numbered migration once, however often the file is opened', () => {
    const { db } = tempFiles();
    openDatabase(db).sqlite.close();
    const { sqlite } = openDatabase(db);
    const applied = sqlite.prepare('select version from baton_migrations order by version').all();
    expect(applied).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    sqlite.close();
  });

  it('creates a new file with incremental auto-vacuum and leaves an existing file as it was', () => {
    const { db } = tempFiles();
    const fresh = openDatabase(db).sqlite;
    expect(fresh.pragma('auto_vacuum', { simple: true })).toBe(2);
    fresh.close();
    const { db: older } = tempFiles();
    const plain = new SQLite(older);
    plain.exec(
      'create table baton_migrations (version integer primary key, name text not null, applied_at integer not null)',
    );
    plain.close();
    const reopened = openDatabase(older).sqlite;
    expect(reopened.pragma('auto_vacuum', { simple: true })).toBe(0);
    reopened.close();
  });

  it("migration 10 takes each existing run's artifact references from its artifact events", () => {
    const { db } = tempFiles();
    const sqlite = new SQLite(db);
    const { kysely } = openDatabase(':memory:');
    sqlite.exec(
      'create table baton_migrations (version integer primary key, name text not null, applied_at integer not null)',
    );
    for (const migration of MIGRATIONS.filter((m) => m.version < 10)) {
      for (const statement of migration.up(kysely)) sqlite.exec(statement.sql);
      sqlite.prepare('insert into baton_migrations values (?, ?, 0)').run(migration.version, migration.name);
    }
    sqlite.prepare('insert into sessions values (?, 0, 0)').run('s');
    // The row as a file at migration 9 had it: no column added since.
    const row: Partial<ReturnType<typeof runRow>> = runRow('r1', 's', { status: 'succeeded' });
    delete row.compensation;
    delete row.agent;
    delete row.agent_tools;
    delete row.forked_from;
    delete row.fork;
    delete row.parent_run_id;
    delete row.parent_call_id;
    delete row.queue_order;
    delete row.pause_requested;
    delete row.metadata;
    delete row.tags;
    const columns = Object.keys(row);
    sqlite
      .prepare(`insert into runs (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`)
      .run(...Object.values(row));
    const event = sqlite.prepare('insert into events values (?, ?, ?, ?, 0)');
    event.run('r1', 1, 'run.created', '{}');
    event.run('r1', 2, 'artifact', JSON.stringify({ sha256: 'aa', size: 1, media_type: 'text/plain' }));
    event.run('r1', 3, 'artifact', JSON.stringify({ sha256: 'bb', size: 1, media_type: 'text/plain' }));
    event.run('r1', 4, 'artifact', JSON.stringify({ sha256: 'aa', size: 1, media_type: 'text/plain' }));
    sqlite.close();
    const migrated = openDatabase(db).sqlite;
    expect(migrated.prepare('select sha256, run_id from artifact_refs order by sha256').all()).toEqual([
      { sha256: 'aa', run_id: 'r1' },
      { sha256: 'bb', run_id: 'r1' },
    ]);
    migrated.close();
  });

  it('migration 20 keeps the feed in order on the events themselves and never gives a position again', async () => {
    const { db } = tempFiles();
    const sqlite = new SQLite(db);
    const { kysely } = openDatabase(':memory:');
    sqlite.exec(
      'create table baton_migrations (version integer primary key, name text not null, applied_at integer not null)',
    );
    for (const migration of MIGRATIONS.filter((m) => m.version < 20)) {
      for (const statement of migration.up(kysely)) sqlite.exec(statement.sql);
      sqlite.prepare('insert into baton_migrations values (?, ?, 0)').run(migration.version, migration.name);
    }
    sqlite.prepare('insert into sessions values (?, 0, 0)').run('s');
    const row: Partial<ReturnType<typeof runRow>> = runRow('r1', 's', { status: 'succeeded' });
    delete row.queue_order;
    delete row.pause_requested;
    delete row.metadata;
    delete row.tags;
    const columns = Object.keys(row);
    sqlite
      .prepare(`insert into runs (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`)
      .run(...Object.values(row));
    const event = sqlite.prepare('insert into events (run_id, seq, type, data, created_at) values (?, ?, ?, ?, 0)');
    event.run('r1', 1, 'run.created', '{}');
    event.run('r1', 2, 'step', '{}');
    event.run('r1', 3, 'state', '{}');
    event.run('r1', 4, 'state', '{}');
    // The newest feed event pruned: the old table's counter still says 3 positions were given.
    sqlite.prepare('delete from events where seq = 4').run();
    sqlite.close();

    const store = createSqliteStore(db);
    expect(store.db.sqlite.prepare("select name from sqlite_master where name like 'event_feed%'").all()).toEqual([]);
    expect((await store.readFeed(0, 10, null)).map((e) => [e.seq, e.position])).toEqual([
      [1, 1],
      [3, 2],
    ]);
    await store.write((writer) => {
      writer.insertEvent({ run_id: 'r1', seq: 4, type: 'action', data: '{}', created_at: 1 });
      writer.insertEvent({ run_id: 'r1', seq: 5, type: 'state', data: '{}', created_at: 1 });
    });
    // Above the 3 given before, not 3 again; an event outside the feed takes no position.
    expect((await store.readFeed(2, 10, null)).map((e) => [e.seq, e.position])).toEqual([[5, 4]]);
    expect(await store.feedHead()).toBe(4);
    await store.close();
  });
});

describe('store', () => {
  it('enforces one active run per session in the database itself, across connections', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    await store.write((writer) => {
      writer.ensureSession('s', Date.now());
      writer.insertRun(runRow('r1', 's'));
    });
    // A second connection, as another process would have.
    const other = new SQLite(db);
    const insert = () =>
      other
        .prepare(
          `insert into runs (id, session_id, status, input, context, options, snapshot, machine_version, version, created_at, updated_at)
           values ('r2', 's', 'planning', 'x', '{}', '{}', '{}', 1, 0, 0, 0)`,
        )
        .run();
    expect(insert).toThrow(/UNIQUE constraint failed/);
    other.prepare("update runs set status = 'succeeded' where id = 'r1'").run();
    expect(insert).not.toThrow();
    other.close();
    await store.close();
  });

  it('saves progress only with the expected version (compare-and-set)', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    await store.write((writer) => {
      writer.ensureSession('s', Date.now());
      writer.insertRun(runRow('r1', 's'));
    });
    const progress = runProgress('r1', 0, { snapshot: '{"a":1}', status: 'planning' });
    const save = (saved: typeof progress) => store.write((writer) => writer.saveProgress(saved));
    await expect(save(progress)).resolves.toBeUndefined();
    await expect(save({ ...progress, snapshot: '{"a":2}' })).rejects.toMatchObject({
      failure: { code: 'run.version_conflict' },
    });
    expect(await store.getRun('r1')).toMatchObject({ version: 1, snapshot: '{"a":1}' });
    await expect(save({ ...progress, expected_version: 1, snapshot: '{"a":3}' })).resolves.toBeUndefined();
    expect(await store.getRun('r1')).toMatchObject({ version: 2, snapshot: '{"a":3}' });
    await store.close();
  });

  it('numbers events per run and refuses a duplicate number', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    await store.write((writer) => {
      writer.ensureSession('s', Date.now());
      writer.insertRun(runRow('r1', 's'));
      writer.insertEvent({ run_id: 'r1', seq: 1, type: 'state', data: '{}', created_at: 0 });
    });
    await expect(
      store.write((writer) => writer.insertEvent({ run_id: 'r1', seq: 1, type: 'state', data: '{}', created_at: 0 })),
    ).rejects.toThrow(/UNIQUE|PRIMARY KEY/);
    expect(await store.lastSeq('r1')).toBe(1);
    await store.close();
  });

  it('shares one transaction among writers queued in the same turn, isolating a failing writer', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    await store.write((writer) => writer.ensureSession('s', Date.now()));
    const before = store.queue.commits;
    const results = await Promise.allSettled([
      store.write((writer) => writer.insertRun(runRow('a', 's'))),
      store.write((writer) => {
        writer.insertRun(runRow('b', 'other-session-that-does-not-exist'));
      }),
      store.write((writer) => writer.insertRun(runRow('c', 's', { status: 'succeeded' }))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(store.queue.commits - before).toBe(1);
    expect(await store.getRun('a')).toBeDefined();
    expect(await store.getRun('b')).toBeUndefined();
    expect(await store.getRun('c')).toBeDefined();
    await store.close();
  });
});
