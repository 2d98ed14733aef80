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

/** SQLite's query plan of the runs page for `filter`, one step a line. */
function planOf(store: ReturnType<typeof createSqliteStore>, filter: RunFilter): string[] {
  const compiled = listRunsQuery('sqlite', filter);
  return (
    store.db.sqlite.prepare(`explain query plan ${compiled.statement.sql}`).all(...compiled.args) as {
      detail: string;
    }[]
  ).map((row) => row.detail);
}

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
          const plan = planOf(store, { ...filter, cursor, limit: 50 });
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

  it('finds runs by metadata, tags, failure code and creation time from an index read in page order', async () => {
    const { db } = tempFiles();
    const store = createSqliteStore(db);
    try {
      const insert = store.db.sqlite.prepare(
        `insert into runs (id, session_id, status, input, context, options, snapshot, machine_version, version,
           step_index, llm_calls, tool_calls, tokens, created_at, updated_at, tenant_id, failure)
         values (?, ?, ?, 'x', '{}', '{}', '{}', 2, 0, 0, 0, 0, 0, ?, ?, 'acme', ?)`,
      );
      await store.write((writer) => {
        for (let i = 0; i < 3_000; i += 1) {
          const failed = i % 3 === 1;
          const failure = failed
            ? JSON.stringify({ code: i % 2 ? 'tool.failed' : 'run.timeout', kind: 'system' })
            : null;
          writer.ensureSession(`default:s${i % 50}`, i);
          insert.run(`run_${i}`, `default:s${i % 50}`, failed ? 'failed' : 'succeeded', i, i, failure);
          writer.insertLabel(`run_${i}`, `m:customer=c${i % 10}`, i);
          writer.insertLabel(`run_${i}`, `t:${i % 2 ? 'odd' : 'even'}`, i);
        }
      });
      store.db.sqlite.exec('analyze');
      const filters: Record<string, RunFilter> = {
        'one search key': { labels: ['m:customer=c3'] },
        'two search keys and a status': { labels: ['m:customer=c3', 't:odd'], status: 'failed' },
        'a search key and a time range': { labels: ['t:even'], createdAfter: 1000, createdBefore: 2000 },
        'a failure code': { failureCode: 'tool.failed' },
        'a failure code and a tenant': { failureCode: 'run.timeout', tenantId: 'acme' },
        'a time range': { createdAfter: 1000, createdBefore: 2000 },
        'a time range and a status': { status: 'failed', createdAfter: 1000, createdBefore: 2000 },
      };
      for (const [name, filter] of Object.entries(filters)) {
        for (const cursor of [undefined, '1500:run_1500']) {
          const plan = planOf(store, { ...filter, cursor, limit: 50 });
          const where = `${name}${cursor ? ', with a cursor' : ''}: ${plan.join(' / ')}`;
          expect(plan.join(), where).not.toMatch(/TEMP B-TREE|SCAN/);
          // The page is driven by one index read in order: the first key's entries, the failure codes, or the runs'.
          const driving = filter.labels
            ? /^SEARCH l0 USING (COVERING )?INDEX run_labels_search/
            : filter.failureCode
              ? /^SEARCH runs USING INDEX runs_failure_code/
              : /^SEARCH runs USING (COVERING )?INDEX runs_(created|status)/;
          expect(plan[0], where).toMatch(driving);
          // Everything else is a lookup by primary key.
          for (const step of plan.slice(1)) expect(step, where).toMatch(/PRIMARY KEY|sqlite_autoindex|CORRELATED/);
          const rows = await store.listRuns({ ...filter, cursor, limit: 50 });
          expect(rows.length, where).toBeGreaterThan(0);
          for (const [i, row] of rows.entries()) {
            if (cursor) expect(row.created_at).toBeLessThan(1500);
            if (i > 0) expect(row.created_at).toBeLessThan(rows[i - 1]!.created_at);
            if (filter.createdAfter !== undefined) expect(row.created_at).toBeGreaterThanOrEqual(filter.createdAfter);
            if (filter.createdBefore !== undefined) expect(row.created_at).toBeLessThan(filter.createdBefore);
            if (filter.failureCode) expect(JSON.parse(row.failure!).code).toBe(filter.failureCode);
            if (filter.status) expect(row.status).toBe(filter.status);
            const n = Number(row.id.slice(4));
            if (filter.labels?.includes('m:customer=c3')) expect(n % 10).toBe(3);
            if (filter.labels?.includes('t:odd')) expect(n % 2).toBe(1);
            if (filter.labels?.includes('t:even')) expect(n % 2).toBe(0);
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
