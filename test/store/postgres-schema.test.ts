/**
 * The Baton schema on PostgreSQL: migrated once however many processes open it at the same
 * moment, the same tables and columns as SQLite's, bigint times and counters read back as
 * numbers, bytes as bytes, and the one-active-run-per-session rule held by the database.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres/open-postgres.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { freshDatabase, hasPostgres } from '../helpers/pg.js';
import { tempFiles } from '../helpers/temp.js';
import { runRow } from '../helpers/run-row.js';
import type { RunStatus } from '../../src/index.js';

const run = (id: string, session: string, status: RunStatus = 'waiting_human') =>
  runRow(id, session, {
    status,
    tokens: 9_000_000_000,
    cost_usd: 0.125,
    lease_until: 1_796_000_000_000,
    created_at: 1_796_000_000_000,
    updated_at: 1_796_000_000_001,
  });

describe.skipIf(!hasPostgres())('the schema on PostgreSQL', () => {
  it('is migrated once when several processes open the database at the same moment', async () => {
    for (let round = 0; round < 5; round += 1) {
      const url = await freshDatabase();
      const opened = await Promise.allSettled(Array.from({ length: 5 }, () => openPostgres(url)));
      const pools = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      try {
        expect(opened.filter((result) => result.status === 'rejected')).toEqual([]);
        const all = POSTGRES_MIGRATIONS.map((m) => m.version);
        expect(all).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
        for (const db of pools) expect(await db.applied()).toEqual(all);
      } finally {
        await Promise.all(pools.map((db) => db.close()));
      }
    }
  });

  it('has the tables and columns of the SQLite schema', async () => {
    const url = await freshDatabase();
    const db = await openPostgres(url);
    const { db: file } = tempFiles();
    const store = createSqliteStore(file);
    try {
      const tables = (
        store.db.sqlite
          .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
          .all() as { name: string }[]
      ).map((t) => t.name);
      expect(tables).not.toContain('event_feed');
      for (const table of tables.filter((name) => name !== 'feed_floor')) {
        const sqlite = (store.db.sqlite.prepare(`pragma table_info(${table})`).all() as { name: string }[])
          .map((c) => c.name)
          .sort();
        const postgres = (
          await sql<{
            column_name: string;
          }>`select column_name from information_schema.columns where table_name = ${table}`.execute(db.kysely)
        ).rows
          .map((c) => c.column_name)
          .sort();
        // The one difference, by design: SQLite numbers the feed on the events themselves (a
        // position and the floor prunes leave), PostgreSQL in `event_feed`, placed after commit.
        const sqliteOnly = table === 'events' ? ['position'] : [];
        expect(postgres, table).toEqual(sqlite.filter((column) => !sqliteOnly.includes(column)));
      }
    } finally {
      await store.close();
      await db.close();
    }
  });

  it('reads bigint back as numbers and bytea as bytes, and keeps one active run per session', async () => {
    const url = await freshDatabase();
    const db = await openPostgres(url);
    try {
      await db.kysely.insertInto('sessions').values({ id: 's', created_at: 1, updated_at: 1 }).execute();
      await db.kysely.insertInto('runs').values(run('r1', 's')).execute();
      const row = await db.kysely.selectFrom('runs').selectAll().where('id', '=', 'r1').executeTakeFirstOrThrow();
      expect(row).toMatchObject({ tokens: 9_000_000_000, cost_usd: 0.125, lease_until: 1_796_000_000_000, version: 0 });
      expect(typeof row.created_at).toBe('number');
      await expect(db.kysely.insertInto('runs').values(run('r2', 's')).execute()).rejects.toMatchObject({
        code: '23505',
      });
      await db.kysely
        .insertInto('runs')
        .values(run('r3', 's', 'succeeded'))
        .execute();

      const bytes = Buffer.from([0, 1, 2, 255]);
      await db.kysely
        .insertInto('artifacts')
        .values({ sha256: 'h', size: 4, media_type: 'application/octet-stream', content: bytes, created_at: 1 })
        .execute();
      const artifact = await db.kysely.selectFrom('artifacts').selectAll().executeTakeFirstOrThrow();
      expect(Buffer.compare(artifact.content, bytes)).toBe(0);

      await db.kysely
        .insertInto('messages')
        .values({ session_id: 's', run_id: 'r1', role: 'user', content: 'hi', created_at: 2 })
        .execute();
      const message = await db.kysely.selectFrom('messages').selectAll().executeTakeFirstOrThrow();
      expect(message.id).toBe(1);
    } finally {
      await db.close();
    }
  });
});
