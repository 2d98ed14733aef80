/**
 * The statements of the versioned memory (`memoryTools()`): a write as the next version, the last
 * version, and the entries of scopes as of a version (each key's last write at or below it).
 */
import { sql } from 'kysely';
import { idIn, type Build } from './compile.js';

export const MEMORY_BUILDS = {
  // The next version is one above the last, computed in the writing statement: on SQLite one
  // writer at a time; on PostgreSQL after `lockMemory` (the transaction's advisory lock), so
  // versions are in commit order and a read as of a version never changes.
  putMemory: (db, p) =>
    db
      .insertInto('memory')
      .columns(['seq', 'scope', 'key', 'value', 'run_id', 'tool_call_id', 'created_at'])
      .expression(
        db
          .selectFrom('memory')
          .select([
            sql<number>`coalesce(max(seq), 0) + 1`.as('seq'),
            sql<string>`${p('scope')}`.as('scope'),
            sql<string>`${p('key')}`.as('key'),
            sql<string | null>`${p('value')}`.as('value'),
            sql<string>`${p('run_id')}`.as('run_id'),
            sql<string>`${p('tool_call_id')}`.as('tool_call_id'),
            sql<number>`${p('created_at')}`.as('created_at'),
          ])
          .where(sql<boolean>`true`),
      )
      .onConflict((oc) => oc.column('tool_call_id').doNothing()),
  // PostgreSQL only: the lock a unit that writes memory takes first (released at its commit).
  lockMemory: (db) => db.selectNoFrom(sql<null>`pg_advisory_xact_lock(7261432119)`.as('locked')),
  memoryVersion: (db) => db.selectFrom('memory').select(sql<number>`coalesce(max(seq), 0)`.as('version')),
  readMemory: (db, p, dialect) =>
    db
      .selectFrom('memory as m')
      .selectAll('m')
      .where('m.scope', 'in', idIn(p, dialect, 'scopes'))
      .where('m.seq', '<=', p('version'))
      .where(({ eb, selectFrom }) =>
        eb(
          'm.seq',
          '=',
          selectFrom('memory as n')
            .select(sql<number>`max(n.seq)`.as('seq'))
            .whereRef('n.scope', '=', 'm.scope')
            .whereRef('n.key', '=', 'm.key')
            .where('n.seq', '<=', p('version')),
        ),
      )
      .orderBy('m.scope')
      .orderBy('m.key'),
} satisfies Record<string, Build>;
