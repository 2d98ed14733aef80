/** The PostgreSQL section of the bench report. */
import { cpus } from 'node:os';
import { formatNumber, formatTable } from './format-table.js';
import type { PgBench } from './measure-postgres.js';

/** The raw commit rates, Baton's runs/s per worker count, and where the scaling stops and why. */
export function formatPostgres(bench: PgBench): string {
  if ('skipped' in bench) return `PostgreSQL: skipped (${bench.skipped}).`;
  const ceiling = Math.max(...bench.raw.map((r) => r.perSecond));
  const rawOf = (clients: number) => bench.raw.find((r) => r.clients === clients) ?? bench.raw[0]!;
  const raw = formatTable(
    ['PostgreSQL, raw', 'rate'],
    bench.raw.map((r) => [
      `upsert (~2 KB) + event per transaction, ${r.clients === 1 ? '1 client' : `${r.clients} clients (pool of 20)`}`,
      `${formatNumber(r.perSecond)} tx/s`,
    ]),
  );
  // A run's own commits (its units, counted by the runtime) at the loop's rate, against the raw
  // rate of as many clients.
  const loops = formatTable(
    ['Baton, model-like planner, one process', 'rate', 'commits/run', 'CPU ms/run', 'commits/s', '÷ raw'],
    bench.loops.map((l) => [
      l.concurrency === 1 ? 'sequential' : `${l.concurrency} runs in flight`,
      `${formatNumber(l.runsPerSecond, 1)} runs/s`,
      formatNumber(l.commitsPerRun, 2),
      formatNumber(l.cpuMsPerRun, 2),
      formatNumber(l.runsPerSecond * l.commitsPerRun),
      `${formatNumber((l.runsPerSecond * l.commitsPerRun) / rawOf(l.concurrency).perSecond, 2)}× of ${l.concurrency === 1 ? '1 client' : `${l.concurrency} clients`}`,
    ]),
  );
  // Every transaction the database committed (pg_stat_database): the runs' units, and the reads,
  // claims and waits of every process besides.
  const workers = formatTable(
    [
      'Baton, worker processes (cheap planner), 50 runs in flight',
      'rate',
      'transactions/s',
      '÷ raw max',
      'others busy',
    ],
    bench.workers.map((w) => [
      `${w.workers} worker process${w.workers === 1 ? '' : 'es'}`,
      `${formatNumber(w.runsPerSecond, 1)} runs/s`,
      formatNumber(w.commitsPerSecond),
      `${formatNumber(w.commitsPerSecond / ceiling, 2)}×`,
      w.otherCpus === null ? '—' : formatNumber(w.otherCpus, 2),
    ]),
  );
  const [one, ...more] = bench.workers;
  const growth = more
    .map((w) => `${w.workers} workers ${formatNumber(w.runsPerSecond / one!.runsPerSecond, 2)}× of 1`)
    .join(', ');
  const best = bench.workers.reduce((a, b) => (b.runsPerSecond > a.runsPerSecond ? b : a));
  const busiest = Math.max(...bench.workers.map((w) => w.otherCpus ?? 0));
  const limit =
    best.commitsPerSecond >= 0.8 * ceiling
      ? `the database's commit rate (${formatNumber(best.commitsPerSecond)} of ${formatNumber(ceiling)} transactions/s)`
      : busiest >= 0.75 * cpus().length
        ? `the CPUs: this machine has ${cpus().length}, and the other processes (the database, the workers, anything else running) used ${formatNumber(busiest, 1)} of them besides this one (the client keeping 50 runs in flight); transactions stayed at ${formatNumber((best.commitsPerSecond / ceiling) * 100)}% of the raw rate`
        : `neither the commit rate (${formatNumber((best.commitsPerSecond / ceiling) * 100)}% of raw) nor the CPUs: look at round trips per unit`;
  return [
    `PostgreSQL (${bench.settings}): 5-step runs, one unsafe call a step.`,
    raw,
    loops,
    workers,
    `The worker rows count every transaction the database committed (its own statistics: reads, claims and waits included), against the faster raw rate; "others busy" there includes the database and the workers themselves, so it is high by design.`,
    `Scaling: ${growth}; best with ${best.workers} (${formatNumber(best.runsPerSecond, 1)} runs/s). What stops it: ${limit}.`,
  ].join('\n');
}
