/**
 * Scaling of runs waiting for a human: memory held, time to open the file, and approve →
 * succeeded latency, with a small and a large number of waiting runs. One real run is driven to
 * its approval, then cloned in SQL (ids rewritten everywhere they appear), so a large file is
 * made in seconds; then the file is opened afresh and measured through the public API.
 */
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime, createScriptedPlanner, defineTool, type Runtime } from '../src/index.js';
import { hashOf } from '../src/runtime/model/ids.js';

/** What one size measured. */
export interface WaitingScale {
  runs: number;
  /** Heap and RSS held after opening, over those of the same runtime on an empty file (MiB). */
  heapMiB: number;
  rssMiB: number;
  openMs: number;
  /** Median approve → succeeded, over `samples` runs (ms). */
  approveMs: number;
  liveRuns: number;
  wakeTimers: number;
}

function open(database: string): Runtime {
  const send = defineTool({
    name: 'mail.send',
    description: 'Sends a mail',
    input: z.object({ to: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ to }) => `sent to ${to}`,
  });
  return createRuntime({
    database,
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'mail.send', args: { to: 'ops' } }] },
      { type: 'final', answer: 'sent' },
    ]),
    tools: [send],
  });
}

/** Rewrites every column of `table` that mentions the template run id for clone number `i`. */
function cloneSql(sqlite: SQLite.Database, table: string, overrides: Record<string, string>): string {
  const columns = (sqlite.prepare(`pragma table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const values = columns.map((c) => overrides[c] ?? `replace(t.${c}, :template, 'run_w' || n.i)`);
  return `with recursive n(i) as (select 1 union all select i + 1 from n where i < :count)
    insert into ${table} (${columns.join(', ')}) select ${values.join(', ')} from ${table} t, n where t.${table === 'runs' ? 'id' : 'run_id'} = :template`;
}

async function makeFile(database: string, runs: number): Promise<void> {
  const runtime = open(database);
  const template = (await runtime.wait((await runtime.start({ input: 'mail ops' })).id)).id;
  await runtime.close();
  const sqlite = new SQLite(database);
  try {
    sqlite.transaction(() => {
      const params = { template, count: runs - 1 };
      sqlite
        .prepare(
          `with recursive n(i) as (select 1 union all select i + 1 from n where i < :count)
           insert into sessions (id, created_at, updated_at) select 'default:w' || i, 0, 0 from n`,
        )
        .run({ count: runs - 1 });
      const plain = (c: string) => `t.${c}`;
      sqlite
        .prepare(
          cloneSql(sqlite, 'runs', {
            session_id: `'default:w' || n.i`,
            idempotency_key: 'null',
            owner: 'null',
            lease_until: 'null',
            created_at: `t.created_at + n.i`,
            status: plain('status'),
          }),
        )
        .run(params);
      sqlite.prepare(cloneSql(sqlite, 'approvals', {})).run(params);
      sqlite.prepare(cloneSql(sqlite, 'steps', {})).run(params);
      // An approval is bound to its calls' ids: each clone's hash is its own.
      const argsHash = hashOf({ to: 'ops' });
      const setHash = sqlite.prepare('update approvals set args_hash = ? where run_id = ?');
      for (let i = 1; i < runs; i += 1) setHash.run(hashOf([[`run_w${i}.s0.c0`, argsHash]]), `run_w${i}`);
    })();
  } finally {
    sqlite.close();
  }
}

function heapMiB(): { heap: number; rss: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed / 2 ** 20, rss: usage.rss / 2 ** 20 };
}

/** Measures a file of `runs` waiting runs (and an empty one, for the baseline). */
export async function measureWaiting(dir: string, runs: number, samples = 20): Promise<WaitingScale> {
  const database = join(dir, `waiting-${runs}.db`);
  await makeFile(database, runs);
  const empty = open(join(dir, `waiting-empty-${runs}.db`));
  await empty.ready;
  const base = heapMiB();
  await empty.close();

  const started = performance.now();
  const runtime = open(database);
  // Open: the database opened and the runs in flight resumed (none here), as `ready` says.
  await runtime.ready;
  const openMs = performance.now() - started;
  try {
    // Let the background check of waiting rows finish, then look at what stays held.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const held = heapMiB();
    const ids = (await runtime.list({ status: 'waiting_human', limit: samples })).runs;
    const latencies: number[] = [];
    for (const run of ids) {
      const t = performance.now();
      await runtime.approve(run.id, run.pendingApprovalId!, { by: 'bench' });
      const done = await runtime.wait(run.id);
      if (done.status !== 'succeeded')
        throw new Error(`run ${run.id} ended ${done.status}: ${JSON.stringify(done.failure)}`);
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);
    const stats = runtime.stats();
    return {
      runs,
      heapMiB: held.heap - base.heap,
      rssMiB: held.rss - base.rss,
      openMs,
      approveMs: latencies[Math.floor(latencies.length / 2)] ?? Number.NaN,
      liveRuns: stats.liveRuns,
      wakeTimers: stats.wakeTimers,
    };
  } finally {
    await runtime.close();
  }
}
