/**
 * A fork is created in one unit of work: a real child process SIGKILLed in the middle of it
 * (`fork.copying`: the fork's row, `run.created` and copied events written, its copied steps
 * and ledger not yet) leaves no fork and no row of one — no run, event, step, call, wait,
 * message or artifact reference — and the source as it was; a fork made afterwards is whole.
 * On a SQLite file and on PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { scaled } from '../helpers/limits.js';
import { openRuntime } from '../helpers/runtime.js';
import { spawnChild } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';

const CHILD = 'test/helpers/fork-child.ts';

describe.each(ALL_DIALECTS)('a SIGKILL while a fork is created (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('leaves nothing of the fork, and the source as it was', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const made = await spawnChild(CHILD, [JSON.stringify({ database, phase: 'source' })], {
      timeoutMs: scaled(60_000),
    });
    expect(made.code, made.stderr).toBe(0);
    const source = (JSON.parse(made.stdout.trim()) as { source: string }).source;
    const log = tempFiles().effects;
    const killed = await spawnChild(CHILD, [JSON.stringify({ database, phase: 'fork', source })], {
      env: { BATON_FAILPOINTS: 'fork.copying=kill', BATON_FAILPOINTS_LOG: log },
      timeoutMs: scaled(60_000),
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(readFileSync(log, 'utf8')).toBe('fork.copying=kill@1\n');

    const runtime = openRuntime({ database, planner: createScriptedPlanner([]), tools: [], recover: false });
    await runtime.ready;
    const { runs } = await runtime.list({ limit: 100 });
    expect(runs.map((r) => r.id)).toEqual([source]);
    expect(await runtime.forks(source)).toEqual([]);
    expect(await runtime.get(source)).toMatchObject({ status: 'succeeded', forkedFrom: null });
    // No row of any other run: the fork's unit left nothing behind.
    const counts = await orphanRows(database, dialect, source);
    expect(counts).toEqual({
      events: 0,
      steps: 0,
      tool_calls: 0,
      approvals: 0,
      messages: 0,
      artifact_refs: 0,
      sessions: 1,
    });
    await runtime.close();

    const again = await spawnChild(CHILD, [JSON.stringify({ database, phase: 'fork', source })], {
      timeoutMs: scaled(60_000),
    });
    expect(again.code, again.stderr).toBe(0);
    const fork = (JSON.parse(again.stdout.trim()) as { fork: string }).fork;
    const reopened = openRuntime({ database, planner: createScriptedPlanner([]), tools: [], recover: false });
    expect(await reopened.get(fork)).toMatchObject({ forkedFrom: { runId: source, step: 1 } });
    expect((await reopened.toolCalls(fork)).map((c) => c.copiedFrom)).toEqual([`${source}.s0.c0`]);
  });
});

/** Rows of the file that belong to no run but `source`, and the sessions in it. */
async function orphanRows(database: string, dialect: string, source: string) {
  const queries = {
    events: 'select count(*) as n from events where run_id <> $1',
    steps: 'select count(*) as n from steps where run_id <> $1',
    tool_calls: 'select count(*) as n from tool_calls where run_id <> $1',
    approvals: 'select count(*) as n from approvals where run_id <> $1',
    messages: 'select count(*) as n from messages where run_id is null or run_id <> $1',
    artifact_refs: 'select count(*) as n from artifact_refs where run_id <> $1',
    sessions: 'select count(*) as n from sessions where $1 is not null',
  };
  const counts: Record<string, number> = {};
  if (dialect === 'sqlite') {
    const db = new SQLite(database, { readonly: true });
    for (const [name, sql] of Object.entries(queries)) {
      counts[name] = Number((db.prepare(sql.replace('$1', '?')).get(source) as { n: number }).n);
    }
    db.close();
    return counts;
  }
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  for (const [name, sql] of Object.entries(queries)) {
    counts[name] = Number(
      (await client.query<{ n: string }>(sql.replace('$1 is not null', '$1::text is not null'), [source])).rows[0]!.n,
    );
  }
  await client.end();
  return counts;
}
