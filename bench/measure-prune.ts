/**
 * Retention next to live traffic: a file holding `runs` finished runs (each with its events,
 * steps, a ledger row, session history; every tenth with an artifact of its own) is pruned whole
 * while 20 live runs go on in a loop. What the live runs feel is the longest gap between two
 * committed events of one run, compared with the same traffic and no prune, side by side; the
 * file's size before and after shows what incremental vacuum gave back.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createRuntime, type PruneReport, type Runtime } from '../src/index.js';
import { openDatabase } from '../src/store/index.js';
import { storeOf } from '../src/runtime/internals.js';
import { formatNumber } from './format-table.js';
import { readLoop } from './read-loop.js';

/** Gaps between consecutive committed events of the live runs, in ms. */
interface LiveGaps {
  runs: number;
  p99: number;
  max: number;
}

export interface PruneScale {
  runs: number;
  fillSeconds: number;
  report: PruneReport;
  /** The live runs' event gaps while pruning, and with no prune (the same traffic for as long). */
  during: LiveGaps;
  idle: LiveGaps;
  bytesBefore: number;
  bytesAfter: number;
}

const OLD = 1_600_000_000_000;

function fill(path: string, runs: number): void {
  const { sqlite } = openDatabase(path);
  try {
    const statement = (text: string) => sqlite.prepare(text);
    const session = statement('insert into sessions (id, created_at, updated_at) values (?, ?, ?)');
    const run = statement(
      `insert into runs (id, session_id, status, input, context, options, snapshot, machine_version, version,
         step_index, llm_calls, tool_calls, tokens, created_at, updated_at)
       values (?, ?, ?, 'bench', '{}', '{}', ?, 2, 12, 2, 2, 1, 300, ?, ?)`,
    );
    const event = statement('insert into events (run_id, seq, type, data, created_at) values (?, ?, ?, ?, ?)');
    const step = statement(
      'insert into steps (run_id, step_index, decision, usage, context, created_at) values (?, ?, ?, ?, ?, ?)',
    );
    const call = statement(
      `insert into tool_calls (id, run_id, step_index, call_index, tool, effect, args, args_hash, status, result, attempts, started_at, finished_at)
       values (?, ?, 0, 0, 'page.read', 'read', '{"n":1}', 'h', 'succeeded', ?, 1, ?, ?)`,
    );
    const message = statement(
      'insert into messages (session_id, run_id, role, content, created_at) values (?, ?, ?, ?, ?)',
    );
    const artifact = statement(
      'insert into artifacts (sha256, size, media_type, content, created_at) values (?, ?, ?, ?, ?)',
    );
    const ref = statement('insert into artifact_refs (sha256, run_id) values (?, ?)');
    const snapshot = JSON.stringify({ status: 'done', value: 'succeeded', context: { padding: 'x'.repeat(400) } });
    const data = JSON.stringify({ from: 'planning', to: 'executing', step_index: 0, note: 'y'.repeat(120) });
    sqlite.transaction(() => {
      for (let i = 0; i < runs; i += 1) {
        const id = `run_${String(i).padStart(8, '0')}`;
        const at = OLD + i;
        session.run(`s${i}`, at, at);
        run.run(id, `s${i}`, i % 10 === 9 ? 'failed' : 'succeeded', snapshot, at, at);
        for (let seq = 1; seq <= 10; seq += 1) event.run(id, seq, 'state', data, at);
        for (let s = 0; s < 2; s += 1) step.run(id, s, '{"type":"final"}', '{"tokens":150}', '{}', at);
        call.run(`${id}.s0.c0`, id, '{"ok":true}', at, at);
        message.run(`s${i}`, id, 'user', 'bench input', at);
        message.run(`s${i}`, id, 'assistant', 'bench answer', at);
        if (i % 10 === 0) {
          const sha = `sha-${i}`;
          artifact.run(sha, 4_096, 'text/plain', Buffer.alloc(4_096, i % 251), at);
          ref.run(sha, id);
        }
      }
    })();
  } finally {
    sqlite.close();
  }
}

/** Live runs: three read steps each, started again as each ends, `concurrency` at a time, until `until` resolves. */
async function liveTraffic(runtime: Runtime, concurrency: number, until: Promise<unknown>): Promise<LiveGaps> {
  const last = new Map<string, number>();
  const gaps: number[] = [];
  const stop = runtime.watch((event) => {
    if (event.type === 'draft') return;
    const now = performance.now();
    const before = last.get(event.runId);
    if (before !== undefined) gaps.push(now - before);
    last.set(event.runId, now);
  });
  let done = false;
  void until.finally(() => (done = true));
  let runs = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!done) {
        const run = await runtime.start({ input: 'live' });
        await runtime.wait(run.id);
        runs += 1;
      }
    }),
  );
  stop();
  gaps.sort((a, b) => a - b);
  return {
    runs,
    p99: gaps[Math.min(gaps.length - 1, Math.floor(gaps.length * 0.99))] ?? 0,
    max: gaps.at(-1) ?? 0,
  };
}

function fileBytes(runtime: Runtime, path: string): number {
  storeOf(runtime).db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(path).size;
}

/** Prunes a file of `runs` finished runs whole (the default batch size), next to live runs. */
export async function measurePrune(dir: string, runs: number): Promise<PruneScale> {
  const database = join(dir, `prune-${runs}.db`);
  const filled = performance.now();
  fill(database, runs);
  const fillSeconds = (performance.now() - filled) / 1_000;
  const runtime = createRuntime({
    database,
    ...readLoop(3),
    recover: false,
  });
  try {
    await runtime.ready;
    const bytesBefore = fileBytes(runtime, database);
    let report: PruneReport | undefined;
    const pruning = runtime.prune({ finishedBefore: OLD + runs }).then((r) => (report = r));
    const during = await liveTraffic(runtime, 20, pruning);
    const took = report!.durationMs;
    const idle = await liveTraffic(runtime, 20, new Promise((resolve) => setTimeout(resolve, took)));
    return { runs, fillSeconds, report: report!, during, idle, bytesBefore, bytesAfter: fileBytes(runtime, database) };
  } finally {
    await runtime.close();
  }
}

/** The retention rows of the report. */
export function formatPrune(scale: PruneScale): string {
  const { report, during, idle } = scale;
  const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  return [
    `Retention: prune ${formatNumber(scale.runs)} finished runs (10 events, 2 steps, 1 tool call, 2 messages each; an artifact every 10th) next to 20 live runs:`,
    `  deleted ${formatNumber(report.runs)} runs, ${formatNumber(report.events)} events, ${formatNumber(report.artifacts)} artifacts in ${(report.durationMs / 1_000).toFixed(1)} s (${formatNumber(Math.round(report.runs / (report.durationMs / 1_000)))} runs/s), ${formatNumber(report.batches)} batches, longest batch ${ms(report.longestBatchMs)}`,
    `  live runs' longest wait between two events: ${ms(during.max)} while pruning vs ${ms(idle.max)} without (p99 ${ms(during.p99)} vs ${ms(idle.p99)}; ${formatNumber(during.runs)} vs ${formatNumber(idle.runs)} live runs finished in the same time)`,
    `  file: ${mb(scale.bytesBefore)} before, ${mb(scale.bytesAfter)} after (${mb(report.reclaimedBytes)} given back by incremental vacuum)`,
  ].join('\n');
}
