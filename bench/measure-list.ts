/**
 * Scaling with the number of runs in the file: the same `list()` pages (first, deep,
 * status-filtered deep, by metadata and tag, by failure code, by creation time), `get()` of one
 * run and `start()` of a new one (until its row is committed) on a small file and a large one, so
 * any growth shows as a ratio. Runs are written straight into the file (finished and waiting ones,
 * two tenants, a customer and a tag each, failures with two codes), then used through the API.
 */
import { join } from 'node:path';
import { createRuntime, createScriptedPlanner } from '../src/index.js';
import { openDatabase } from '../src/store/index.js';

/** p50 and p99 of one kind of page, in milliseconds. */
export interface ListTiming {
  page: string;
  p50: number;
  p99: number;
}

/** One file size and its timings. */
export interface ListScale {
  runs: number;
  timings: ListTiming[];
}

const STATUSES = ['succeeded', 'failed', 'waiting_human'] as const;

/** The creation time of the first run written. */
const BASE = 1_700_000_000_000;

function fill(path: string, runs: number): void {
  const { sqlite } = openDatabase(path);
  try {
    const session = sqlite.prepare('insert into sessions (id, created_at, updated_at) values (?, ?, ?)');
    const insert = sqlite.prepare(
      `insert into runs (id, session_id, status, input, context, options, snapshot, machine_version, version,
         step_index, llm_calls, tool_calls, tokens, created_at, updated_at, tenant_id, failure, metadata, tags)
       values (?, ?, ?, 'bench', '{}', '{}', '{}', 2, 1, 5, 6, 5, 100, ?, ?, ?, ?, ?, ?)`,
    );
    const label = sqlite.prepare('insert into run_labels (run_id, label, created_at) values (?, ?, ?)');
    sqlite.transaction(() => {
      for (let i = 0; i < runs; i += 1) {
        const status = STATUSES[i % 3]!;
        const id = `default:bench-${i}`;
        const runId = `run_${String(i).padStart(8, '0')}`;
        const at = BASE + i;
        const customer = `c${i % 100}`;
        const tag = i % 3 === 0 ? 'nightly' : 'adhoc';
        const failure = status === 'failed' ? JSON.stringify({ code: i % 2 ? 'tool.failed' : 'run.timeout' }) : null;
        session.run(id, i, i);
        const metadata = JSON.stringify({ customer });
        insert.run(runId, id, status, at, i, i % 2 ? 'acme' : null, failure, metadata, JSON.stringify([tag]));
        label.run(runId, `m:customer=${customer}`, at);
        label.run(runId, `t:${tag}`, at);
      }
    })();
  } finally {
    sqlite.close();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Times `samples` reads of each page on a file of `runs` runs. */
export async function measureList(dir: string, runs: number, samples = 200): Promise<ListScale> {
  const database = join(dir, `list-${runs}.db`);
  fill(database, runs);
  const runtime = createRuntime({ database, planner: createScriptedPlanner([]), tools: [], recover: false });
  try {
    // The cursor of a page near the end of the list: what a deep scroll asks for.
    const deep = `${BASE + 60}:run_${String(60).padStart(8, '0')}`;
    const pages: [string, () => Promise<unknown>][] = [
      ['list(): first page', () => runtime.list({ limit: 50 })],
      ['list(): deep page', () => runtime.list({ limit: 50, cursor: deep })],
      ['list(): status, deep page', () => runtime.list({ limit: 50, status: 'failed', cursor: deep })],
      [
        'list(): tenant + status, first page',
        () => runtime.list({ limit: 50, status: 'waiting_human', tenantId: 'acme' }),
      ],
      [
        'list(): metadata + tag, first page',
        () => runtime.list({ limit: 50, metadata: { customer: 'c7' }, tag: 'nightly' }),
      ],
      ['list(): failure code, deep page', () => runtime.list({ limit: 50, failureCode: 'tool.failed', cursor: deep })],
      [
        'list(): created range + status',
        () =>
          runtime.list({ limit: 50, status: 'failed', createdAfter: BASE + runs / 4, createdBefore: BASE + runs / 2 }),
      ],
      ['get() of one run', () => runtime.get(`run_${String(Math.floor(runs / 2)).padStart(8, '0')}`)],
      // Last: the runs it starts (whose planner has nothing to say) end on their own meanwhile.
      ['start() until committed', () => runtime.start({ input: 'bench' })],
    ];
    const timings = [];
    for (const [page, read] of pages) {
      await read();
      const times: number[] = [];
      for (let i = 0; i < samples; i += 1) {
        const start = performance.now();
        await read();
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      timings.push({ page, p50: percentile(times, 50), p99: percentile(times, 99) });
    }
    return { runs, timings };
  } finally {
    await runtime.close();
  }
}
