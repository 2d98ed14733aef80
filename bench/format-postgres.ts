/** The PostgreSQL section of the bench report. */
import { cpus } from 'node:os';
import { formatNumber, formatTable } from './format-table.js';
import type { PgBench } from './measure-postgres.js';

/** The raw commit rates, Baton's runs/s per worker count, and where the scaling stops and why. */
export function formatPostgres(bench: PgBench): string {
  if ('skipped' in bench) return `PostgreSQL: skipped (${bench.skipped}).`;
  const ceiling = Math.max(...bench.raw.map((r) => r.perSecond));
  const rows = [
    ...bench.raw.map((r) => [
      `raw PostgreSQL, upsert (~2 KB) + event per tx, ${r.clients === 1 ? '1 client' : `${r.clients} clients (pool of 20)`}`,
      `${formatNumber(r.perSecond)} tx/s`,
      formatNumber(r.perSecond),
      `${formatNumber(r.perSecond / ceiling, 2)}×`,
      '',
    ]),
    // A run's commits at the loop's rate, against the raw rate of as many clients.
    ...bench.loops.map((l) => {
      const raw = bench.raw.find((r) => r.clients === l.concurrency) ?? bench.raw[0]!;
      return [
        `Baton, model-like planner, one process, ${l.concurrency === 1 ? 'sequential' : `${l.concurrency} runs in flight`}: ${formatNumber(l.commitsPerRun, 2)} commits/run, ${formatNumber(l.cpuMsPerRun, 2)} CPU ms/run`,
        `${formatNumber(l.runsPerSecond, 1)} runs/s`,
        formatNumber(l.runsPerSecond * l.commitsPerRun),
        `${formatNumber((l.runsPerSecond * l.commitsPerRun) / raw.perSecond, 2)}×`,
        '',
      ];
    }),
    ...bench.workers.map((w) => [
      `Baton, ${w.workers} worker process${w.workers === 1 ? '' : 'es'}, 50 runs in flight`,
      `${formatNumber(w.runsPerSecond, 1)} runs/s`,
      formatNumber(w.commitsPerSecond),
      `${formatNumber(w.commitsPerSecond / ceiling, 2)}×`,
      w.otherCpus === null ? '—' : formatNumber(w.otherCpus, 2),
    ]),
  ];
  const table = formatTable(['PostgreSQL', 'rate', 'commits/s', '÷ raw', 'others busy'], rows);
  const [one, ...more] = bench.workers;
  const growth = more
    .map((w) => `${w.workers} workers ${formatNumber(w.runsPerSecond / one!.runsPerSecond, 2)}× of 1`)
    .join(', ');
  const best = bench.workers.reduce((a, b) => (b.runsPerSecond > a.runsPerSecond ? b : a));
  const busiest = Math.max(...bench.workers.map((w) => w.otherCpus ?? 0));
  const limit =
    best.commitsPerSecond >= 0.8 * ceiling
      ? `the database's commit rate (${formatNumber(best.commitsPerSecond)} of ${formatNumber(ceiling)} commits/s)`
      : busiest >= 0.75 * cpus().length
        ? `the CPUs: this machine has ${cpus().length}, and the database, the workers and this process (the client keeping 50 runs in flight) used ${formatNumber(busiest, 1)} of them; commits stayed at ${formatNumber((best.commitsPerSecond / ceiling) * 100)}% of the raw rate`
        : `neither the commit rate (${formatNumber((best.commitsPerSecond / ceiling) * 100)}% of raw) nor the CPUs: look at round trips per unit`;
  return [
    `PostgreSQL (${bench.settings}): 5-step runs, one unsafe call a step; ÷ raw is commits/s against the raw rate (of as many clients for the model-like rows, run in one process; of the faster for the worker rows, which are started by an API-only runtime here and driven by worker processes):`,
    table,
    `Scaling: ${growth}; best with ${best.workers} (${formatNumber(best.runsPerSecond, 1)} runs/s). What stops it: ${limit}.`,
  ].join('\n');
}
