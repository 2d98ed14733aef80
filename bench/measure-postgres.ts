/**
 * The PostgreSQL section of `npm run bench`: on a cluster with durable settings (fsync and
 * synchronous_commit on), the raw commit rate of what one Baton transition writes (a ~2 KB
 * upsert and an event, one transaction each) from 1 client and from 50 over a pool of 20, next
 * to Baton's runs/s with 1, 2 and 4 worker processes keeping 50 runs in flight (5 steps of one
 * unsafe call each), started by an API-only runtime in this process. The cluster is started
 * here with `.ci/pg.sh --durable` (if PostgreSQL is installed) unless `BENCH_PG_URL` names one.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createRuntime, createScriptedPlanner } from '../src/index.js';
import { createBenchRuntime } from './bench-runtime.js';
import { cpuBetween, sampleCpu } from './machine-load.js';
import { measureThroughput } from './measure-throughput.js';
import { LOOP_STEPS } from './scenarios.js';

/** The raw reference: transactions of one upsert and one event. */
export interface PgRaw {
  clients: number;
  perSecond: number;
}

/** The model-like loop on PostgreSQL in one runtime in this process, `concurrency` runs in flight. */
export interface PgLoop {
  concurrency: number;
  runsPerSecond: number;
  commitsPerRun: number;
  cpuMsPerRun: number;
}

/** Baton on PostgreSQL with `workers` worker processes. */
export interface PgWorkers {
  workers: number;
  runsPerSecond: number;
  commitsPerSecond: number;
  otherCpus: number | null;
}

export type PgBench = { skipped: string } | { raw: PgRaw[]; loops: PgLoop[]; workers: PgWorkers[]; settings: string };

const REPO = join(import.meta.dirname, '..');

/** A cluster for the bench: the one `BENCH_PG_URL` names, or a fresh durable one (stopped by `stop`). */
function cluster(): { url: string; stop(): void } | null {
  if (process.env.BENCH_PG_URL) return { url: process.env.BENCH_PG_URL, stop: () => undefined };
  const script = join(REPO, '.ci/pg.sh');
  try {
    execFileSync('bash', [
      '-c',
      'command -v initdb || test -x /usr/lib/postgresql/15/bin/initdb || test -x /usr/local/bin/initdb',
    ]);
  } catch {
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-pg-'));
  const url = execFileSync('bash', [script, 'start', dir, '--durable'], { encoding: 'utf8' }).trim();
  return { url, stop: () => execFileSync('bash', [script, 'stop', dir]) };
}

async function freshDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Transactions of one ~2 KB upsert and one event insert, from `clients` callers over a pool of up to 20. */
async function rawRate(url: string, clients: number, durationMs: number): Promise<PgRaw> {
  const pool = new pg.Pool({ connectionString: url, max: Math.min(clients, 20) });
  try {
    await pool.query(
      'create table if not exists raw_rows (id int primary key, body text not null, version bigint not null)',
    );
    await pool.query(
      'create table if not exists raw_events (id bigserial primary key, row_id int not null, data text not null)',
    );
    const body = JSON.stringify({ filler: 'x'.repeat(2_000) });
    let done = 0;
    const deadline = performance.now() + durationMs;
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; performance.now() < deadline; i += 1) {
          const client = await pool.connect();
          try {
            await client.query('begin');
            await client.query({
              name: 'raw_upsert',
              text: 'insert into raw_rows (id, body, version) values ($1, $2, 1) on conflict (id) do update set body = excluded.body, version = raw_rows.version + 1',
              values: [c * 1_000 + (i % 100), body],
            });
            await client.query({
              name: 'raw_event',
              text: 'insert into raw_events (row_id, data) values ($1, $2)',
              values: [c, '{}'],
            });
            await client.query('commit');
            done += 1;
          } finally {
            client.release();
          }
        }
      }),
    );
    return { clients, perSecond: done / (durationMs / 1_000) };
  } finally {
    await pool.end();
  }
}

function spawnWorker(database: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench/pg-worker.ts'), database], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`a bench worker exited with ${code} before it was up`)));
  });
}

async function commitsOf(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'select xact_commit as n from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** Runs/s of `workers` worker processes while this process keeps 50 runs in flight. */
async function withWorkers(adminUrl: string, workers: number, durationMs: number): Promise<PgWorkers> {
  const database = await freshDatabase(adminUrl, `baton_bench_w${workers}`);
  const api = createRuntime({ database, planner: createScriptedPlanner([]), tools: [], drive: false });
  await api.ready;
  const children = await Promise.all(Array.from({ length: workers }, () => spawnWorker(database)));
  try {
    let counting = false;
    let finished = 0;
    let stop = false;
    const slot = async () => {
      while (!stop) {
        const run = await api.start({ input: 'bench' });
        const done = await api.wait(run.id);
        if (done.status !== 'succeeded') throw new Error(`a bench run ended ${done.status}`);
        if (counting) finished += 1;
      }
    };
    const slots = Array.from({ length: 50 }, slot);
    // Warm-up: module loading and JIT in the workers, the caches of the database.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const commitsBefore = await commitsOf(database);
    const before = sampleCpu();
    counting = true;
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    counting = false;
    const after = sampleCpu();
    const commitsAfter = await commitsOf(database);
    stop = true;
    await Promise.all(slots);
    const seconds = (after.at - before.at) / 1_000;
    return {
      workers,
      runsPerSecond: finished / seconds,
      commitsPerSecond: (commitsAfter - commitsBefore) / seconds,
      otherCpus: cpuBetween(before, after).otherCpus,
    };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    await api.close();
  }
}

/**
 * The headline loop of the SQLite rows (a model-like planner, one unsafe call a step) on
 * PostgreSQL, driven by one runtime in this process: what a run costs in commits and CPU.
 */
async function modelLikeLoop(adminUrl: string, concurrency: number, durationMs: number): Promise<PgLoop> {
  const database = await freshDatabase(adminUrl, `baton_bench_loop${concurrency}`);
  const runtime = createBenchRuntime({ database, effect: 'unsafe', steps: LOOP_STEPS, modelLike: true });
  try {
    const r = await measureThroughput(runtime, { concurrency, durationMs });
    return {
      concurrency,
      runsPerSecond: r.runsPerSecond,
      commitsPerRun: r.commits / r.runs,
      cpuMsPerRun: r.cpuMs / r.runs,
    };
  } finally {
    await runtime.close();
  }
}

/** The whole section; skipped (with why) when no PostgreSQL is at hand. */
export async function measurePostgres(durationMs: number): Promise<PgBench> {
  const pgCluster = cluster();
  if (!pgCluster) return { skipped: 'PostgreSQL is not installed (set BENCH_PG_URL, or install postgresql)' };
  try {
    const rawDb = await freshDatabase(pgCluster.url, 'baton_bench_raw');
    const raw = [await rawRate(rawDb, 1, durationMs), await rawRate(rawDb, 50, durationMs)];
    const loops = [
      await modelLikeLoop(pgCluster.url, 1, durationMs),
      await modelLikeLoop(pgCluster.url, 50, durationMs),
    ];
    const results: PgWorkers[] = [];
    for (const workers of [1, 2, 4]) results.push(await withWorkers(pgCluster.url, workers, durationMs));
    const admin = new pg.Client({ connectionString: pgCluster.url });
    await admin.connect();
    const { rows } = await admin.query<{ name: string; setting: string }>(
      "select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'wal_sync_method')",
    );
    await admin.end();
    return { raw, loops, workers: results, settings: rows.map((r) => `${r.name}=${r.setting}`).join(', ') };
  } finally {
    pgCluster.stop();
  }
}
