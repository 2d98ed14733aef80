/**
 * Lists cost what a page costs, not what the table holds: every filter and cursor of
 * `listRuns` is answered from an index read in order and sought to its cursor — no scan of
 * `runs`, no temporary sort — read from SQLite's own query plans on a file with runs in it.
 */
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type RunFilter } from '../../src/store/index.js';
import { catalog, listRunsQuery } from '../../src/store/statements.js';
import { tempFiles } from '../helpers/temp.js';

const FILTERS: Record<string, RunFilter> = {
  'no filter': {},
  status: { status: 'waiting_human' },
  session: { sessionId: 'default:s1' },
  tenant: { tenantId: 'acme' },
  'tenant and status': { tenantId: 'acme', status: 'failed' },
};

describe('list query plans', () => {
  it('reads an index in order and seeks to the cursor, for every filter', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    try {
      const insert = store.db.sqlite.prepare(
        `insert into runs (id, session_id, status, input, context, options, snapshot, machine_version, version,
           step_index, llm_calls, tool_calls, tokens, created_at, updated_at, tenant_id)
         values (?, ?, ?, 'x', '{}', '{}', '{}', 2, 0, 0, 0, 0, 0, ?, ?, ?)`,
      );
      const statuses = ['succeeded', 'failed', 'waiting_human'];
      await store.write((writer) => {
        for (let i = 0; i < 3_000; i += 1) {
          const status = statuses[i % 3]!;
          // A session has at most one active run: finished runs share sessions, waiting ones do not.
          const session = status === 'waiting_human' ? `default:w${i}` : `default:s${i % 50}`;
          writer.ensureSession(session, i);
          insert.run(`run_${i}`, session, status, i, i, i % 2 ? 'acme' : 'globex');
        }
      });
      store.db.sqlite.exec('analyze');
      for (const [name, filter] of Object.entries(FILTERS)) {
        for (const cursor of [undefined, '1500:run_1500']) {
          const compiled = listRunsQuery('sqlite', { ...filter, cursor, limit: 50 });
          const plan = (
            store.db.sqlite.prepare(`explain query plan ${compiled.statement.sql}`).all(...compiled.args) as {
              detail: string;
            }[]
          ).map((row) => row.detail);
          const where = `${name}${cursor ? ', with a cursor' : ''}: ${plan.join(' / ')}`;
          expect(plan, where).toHaveLength(1);
          expect(plan[0], where).toMatch(/USING (COVERING )?INDEX runs_/);
          expect(plan.join(), where).not.toMatch(/TEMP B-TREE/);
          if (cursor || name !== 'no filter') expect(plan[0], where).toMatch(/^SEARCH runs/);
          // The page itself is right: newest first, after the cursor, the filter held.
          const rows = await store.listRuns({ ...filter, cursor, limit: 50 });
          expect(rows.length, where).toBeGreaterThan(0);
          for (const [i, row] of rows.entries()) {
            if (cursor) expect(row.created_at).toBeLessThan(1500);
            if (i > 0) expect(row.created_at).toBeLessThan(rows[i - 1]!.created_at);
            if (filter.status) expect(row.status).toBe(filter.status);
            if (filter.tenantId) expect(row.tenant_id).toBe(filter.tenantId);
            if (filter.sessionId) expect(row.session_id).toBe(filter.sessionId);
          }
        }
      }
    } finally {
      await store.close();
    }
  });

  it('finds due waits and finished runs in partial indexes that runs in flight never touch', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    try {
      const insert = store.db.sqlite.prepare(
        `insert into runs (id, session_id, status, input, context, options, snapshot, machine_version, version,
           step_index, llm_calls, tool_calls, tokens, created_at, updated_at, wake_at)
         values (?, ?, ?, 'x', '{}', '{}', '{}', 2, 0, 0, 0, 0, 0, ?, ?, ?)`,
      );
      const statuses = ['succeeded', 'failed', 'waiting_human', 'executing'];
      await store.write((writer) => {
        for (let i = 0; i < 2_000; i += 1) {
          const status = statuses[i % 4]!;
          writer.ensureSession(`default:s${i}`, i);
          insert.run(`run_${i}`, `default:s${i}`, status, i, i, status === 'waiting_human' ? i : null);
        }
      });
      const plan = (name: 'dueWaitingRuns' | 'nextWake' | 'newestFinished' | 'pruneCandidates') => {
        const statement = catalog('sqlite')[name];
        const args = statement.params.map((param) => (typeof param === 'string' ? 1 : param.value));
        return (store.db.sqlite.prepare(`explain query plan ${statement.sql}`).all(...args) as { detail: string }[])
          .map((row) => row.detail)
          .join(' / ');
      };
      for (const [name, index] of [
        ['dueWaitingRuns', 'runs_wake'],
        ['nextWake', 'runs_wake'],
        ['newestFinished', 'runs_finished'],
        ['pruneCandidates', 'runs_finished'],
      ] as const) {
        const where = `${name}: ${plan(name)}`;
        expect(plan(name), where).toMatch(new RegExp(`^SEARCH runs USING (COVERING )?INDEX ${index} \\(status=\\?`));
        expect(plan(name), where).not.toMatch(/TEMP B-TREE/);
      }
      // Each holds only its own runs: a run in flight is in neither.
      const entries = (index: string) =>
        store.db.sqlite
          .prepare(
            `select count(*) from runs indexed by ${index} where ${index === 'runs_wake' ? "status = 'waiting_human'" : "status in ('succeeded', 'failed')"}`,
          )
          .pluck()
          .get();
      expect(entries('runs_wake')).toBe(500);
      expect(entries('runs_finished')).toBe(1_000);
      const indexed = store.db.sqlite
        .prepare("select name, sql from sqlite_master where name in ('runs_wake', 'runs_finished') order by name")
        .all() as { name: string; sql: string }[];
      expect(indexed.map((row) => row.sql)).toEqual([
        expect.stringMatching(/where status in \('succeeded', 'failed'\)$/),
        expect.stringMatching(/where status = 'waiting_human'$/),
      ]);
    } finally {
      await store.close();
    }
  });
});
