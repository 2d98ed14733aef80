/**
 * `npm run bench`: Baton's tool loop against the raw durable commit rate of the same disk, on
 * SQLite and (when PostgreSQL is installed, or `BENCH_PG_URL` names a server) on PostgreSQL with
 * 1, 2 and 4 worker processes. Prints one report; exits 0 even when a target is missed, non-zero
 * if any run fails. `BENCH_SECONDS` sets the timed window of each scenario (default 3);
 * `BENCH_SKIP_PG=1` leaves PostgreSQL out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  formatBursts,
  formatContention,
  formatLegend,
  formatListScaling,
  formatWaitingScaling,
  formatSnapshots,
  formatStepCost,
  formatThroughput,
} from './format-report.js';
import { formatPostgres } from './format-postgres.js';
import { formatNumber } from './format-table.js';
import { measureBurst } from './measure-burst.js';
import { measureList } from './measure-list.js';
import { measureStepCost } from './measure-step-cost.js';
import { measureWaiting } from './measure-waiting.js';
import { measureSnapshotSize } from './measure-snapshot-size.js';
import { BenchRunError } from './measure-throughput.js';
import { measurePostgres } from './measure-postgres.js';
import { formatPrune, measurePrune } from './measure-prune.js';
import { formatTracing, measureTracing } from './measure-tracing.js';
import { formatMcp, measureMcp } from './measure-mcp.js';
import { measureRawCommitRate } from './raw-commit-rate.js';
import { runScenario, SCENARIOS, SNAPSHOT_STEPS, warmUp, type ScenarioResult } from './scenarios.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
if (!(seconds > 0)) throw new Error(`BENCH_SECONDS must be a positive number, got '${process.env.BENCH_SECONDS}'`);
const durationMs = seconds * 1_000;
/** Runs in the large file of the scaling section (`BENCH_LIST_RUNS`, default 100,000). */
const LIST_RUNS = Number(process.env.BENCH_LIST_RUNS ?? 100_000);
/** Runs waiting for a human in the large file of the scaling section (`BENCH_WAITING_RUNS`, default 100,000). */
const WAITING_RUNS = Number(process.env.BENCH_WAITING_RUNS ?? 100_000);
/** Finished runs pruned next to live traffic (`BENCH_PRUNE_RUNS`, default 100,000). */
const PRUNE_RUNS = Number(process.env.BENCH_PRUNE_RUNS ?? 100_000);

async function main(dir: string): Promise<void> {
  console.log(
    `Baton bench: node ${process.version}, ${cpus().length} CPUs, ${seconds} s per scenario, files in ${dir}`,
  );
  await warmUp(dir, 1_000);

  const raw = measureRawCommitRate(join(dir, 'raw.db'), durationMs);
  console.log(`  raw reference: ${raw.transactions} transactions in ${raw.seconds.toFixed(1)} s`);
  const results: ScenarioResult[] = [];
  for (const scenario of SCENARIOS) {
    const result = await runScenario(dir, scenario, durationMs);
    console.log(`  ${scenario.name}: ${result.runs} runs in ${result.seconds.toFixed(1)} s`);
    results.push(result);
  }
  const [short, long] = SNAPSHOT_STEPS;
  const shortSize = await measureSnapshotSize(dir, short);
  const longSize = await measureSnapshotSize(dir, long);
  const stepCosts = [];
  for (const [steps, output] of [
    [5, 100],
    [50, 100],
    [500, 100],
    [5, 20_000],
    [50, 20_000],
    [500, 20_000],
  ] as const) {
    stepCosts.push(await measureStepCost(dir, steps, output));
  }
  console.log('  long runs: 50 and 500 steps measured');
  const bursts = [await measureBurst(dir, 500), await measureBurst(dir, 5_000)];
  console.log('  bursts: 500 and 5,000 start() calls');
  const waitingSmall = await measureWaiting(dir, 1_000);
  const waitingLarge = await measureWaiting(dir, WAITING_RUNS);
  console.log(`  waiting runs: ${formatNumber(WAITING_RUNS)} written, opened and approved`);
  const listSmall = await measureList(dir, 1_000);
  const listLarge = await measureList(dir, LIST_RUNS);
  console.log(`  list(): ${formatNumber(LIST_RUNS)} runs written and paged`);
  const pruned = await measurePrune(dir, PRUNE_RUNS);
  console.log(`  retention: ${formatNumber(PRUNE_RUNS)} finished runs pruned next to live runs`);
  const tracing = await measureTracing(dir);
  console.log('  tracing: off, no provider, SDK provider');
  const mcp = await measureMcp(dir);
  console.log('  MCP tools: in process, stdio, Streamable HTTP');
  const recheck = measureRawCommitRate(join(dir, 'raw-again.db'), 1_000);
  const postgres =
    process.env.BENCH_SKIP_PG === '1' ? { skipped: 'BENCH_SKIP_PG=1' } : await measurePostgres(durationMs);
  console.log('  PostgreSQL: raw commit rate, then 1, 2 and 4 worker processes');

  const contention = formatContention([
    { name: 'raw reference', otherCpus: raw.otherCpus },
    ...results.map((r) => ({ name: r.scenario.name, otherCpus: r.otherCpus })),
    { name: 'raw re-check', otherCpus: recheck.otherCpus },
  ]);
  const sections = [
    formatThroughput(raw, recheck, results),
    formatSnapshots(shortSize, longSize),
    formatTracing(tracing),
    formatMcp(mcp),
    `Scaling (the same measurement at a small and a large size):\n${formatStepCost(stepCosts)}\n\n${formatBursts(bursts)}\n\n${formatWaitingScaling(waitingSmall, waitingLarge)}\n\n${formatListScaling(listSmall, listLarge)}\n\n${formatPrune(pruned)}`,
    formatPostgres(postgres),
    formatLegend(),
  ];
  console.log(`\n${[...sections, ...(contention ? [contention] : [])].join('\n\n')}`);
}

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
try {
  await main(dir);
} catch (error) {
  // A failed run makes every number meaningless: say which one, and fail the process.
  console.error(error instanceof BenchRunError ? `Benchmark aborted: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
