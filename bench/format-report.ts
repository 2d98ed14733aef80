/** The printed report: measurements next to targets, a ✓/✗ per line, ratios to the raw reference. */
import { formatNumber, formatTable } from './format-table.js';
import type { Burst } from './measure-burst.js';
import type { ListScale } from './measure-list.js';
import type { StepCost } from './measure-step-cost.js';
import type { WaitingScale } from './measure-waiting.js';
import type { SnapshotSize } from './measure-snapshot-size.js';
import type { RawCommitRate } from './raw-commit-rate.js';
import { LOOP_STEPS, SNAPSHOT_MAX_RATIO, type ScenarioResult } from './scenarios.js';

const mark = (ok: boolean): string => (ok ? '✓' : '✗');
const times = (ratio: number): string => `${formatNumber(ratio, 2)}×`;
const cpus = (value: number | null): string => (value === null ? '—' : formatNumber(value, 2));

/** Formats the throughput table; `raw` is the reference, `recheck` the same measurement taken at the end. */
export function formatThroughput(
  raw: RawCommitRate,
  recheck: RawCommitRate,
  results: readonly ScenarioResult[],
): string {
  const header = [
    'scenario',
    'rate',
    'target',
    '',
    'commits/run',
    'ckpts/run',
    'trans/run',
    'trans/s',
    '÷ raw',
    'CPU ms/run',
    'others busy',
  ];
  const rawRow = (name: string, r: RawCommitRate) => [
    name,
    `${formatNumber(r.perSecond)} tx/s`,
    '',
    '',
    '1',
    '1',
    '1',
    formatNumber(r.perSecond),
    times(r.perSecond / raw.perSecond),
    '',
    cpus(r.otherCpus),
  ];
  const rows = results.map((r) => [
    `Baton, ${r.scenario.name}`,
    `${formatNumber(r.runsPerSecond, 1)} runs/s`,
    r.scenario.targetRunsPerSecond === null ? '—' : `≥ ${r.scenario.targetRunsPerSecond}`,
    r.scenario.targetRunsPerSecond === null ? '' : mark(r.runsPerSecond >= r.scenario.targetRunsPerSecond),
    formatNumber(r.commits / r.runs, 2),
    formatNumber(r.checkpoints / r.runs, 2),
    formatNumber(r.transitions / r.runs, 2),
    formatNumber(r.transitions / r.seconds),
    times(r.transitions / r.seconds / raw.perSecond),
    formatNumber(r.cpuMs / r.runs, 2),
    cpus(r.otherCpus),
  ]);
  return formatTable(header, [
    rawRow('raw SQLite, 1 upsert (~2 KB) per tx', raw),
    ...rows,
    rawRow('raw SQLite again, after Baton', recheck),
  ]);
}

/** Formats the snapshot sizes and whether they stay flat as the number of steps grows. */
export function formatSnapshots(short: SnapshotSize, long: SnapshotSize): string {
  const ratio = long.bytes / short.bytes;
  const rows = [
    [`snapshot after ${short.steps} tool steps`, `${formatNumber(short.bytes)} B`, '', '', ''],
    [
      `snapshot after ${long.steps} tool steps`,
      `${formatNumber(long.bytes)} B`,
      `flat (≤ ${times(SNAPSHOT_MAX_RATIO)})`,
      mark(ratio <= SNAPSHOT_MAX_RATIO),
      times(ratio),
    ],
  ];
  return formatTable(['snapshot (runs.snapshot)', 'size', 'target', '', `${long.steps} ÷ ${short.steps} steps`], rows);
}

/** Other processes busier than this (in CPUs) during a measurement make its numbers suspect. */
const CONTENDED_CPUS = 0.3;

/** A warning naming the measurements taken while other processes competed for the machine, or ''. */
export function formatContention(measured: readonly { name: string; otherCpus: number | null }[]): string {
  const contended = measured.filter((m) => m.otherCpus !== null && m.otherCpus > CONTENDED_CPUS);
  if (contended.length === 0) return '';
  const names = contended.map((m) => `${m.name} (${cpus(m.otherCpus)})`).join(', ');
  return `⚠ Other processes kept more than ${CONTENDED_CPUS} CPUs busy during: ${names}. Re-run on a quiet machine.`;
}

/** Notes that say what the columns count. */
export function formatLegend(): string {
  return [
    `A run: ${LOOP_STEPS} steps of one tool call each, then a final answer (scripted planner, zod tool, risk 'low').`,
    "model-like: the planner is not 'cheap', so each step's answer is committed before it is acted on (with its call's started row), as a model's is: the figure to compare with runtimes that checkpoint every step.",
    'commits: group-commit transactions (runtime.stats().commits), one fsync each. ckpts: snapshot writes (runs.version).',
    "trans: state transitions, each durable as a committed 'state' event; one checkpoint may carry several.",
    '÷ raw (SQLite table): durable transitions/s over the raw one-row-per-transaction rate; above 1× only by sharing commits. The PostgreSQL section says what its own columns count.',
    `others busy: CPUs used by other processes meanwhile (from /proc/stat); above ${CONTENDED_CPUS} the numbers are contended.`,
  ].join('\n');
}

/** The p99 bound of a call in the scaling table: reads 5 ms, a start (a durable commit) 20 ms. */
const limitOf = (call: string): number => (call.startsWith('start()') ? 20 : 5);

/** The scaling section: each measurement at a small and a large size, and how much it grew. */
export function formatListScaling(small: ListScale, large: ListScale): string {
  const header = [
    'call',
    `p50 @ ${formatNumber(small.runs)}`,
    `p99 @ ${formatNumber(small.runs)}`,
    `p50 @ ${formatNumber(large.runs)}`,
    `p99 @ ${formatNumber(large.runs)}`,
    'target',
    '',
    'p99 growth',
  ];
  const rows = small.timings.map((s, i) => {
    const l = large.timings[i]!;
    return [
      s.page,
      `${formatNumber(s.p50, 3)} ms`,
      `${formatNumber(s.p99, 3)} ms`,
      `${formatNumber(l.p50, 3)} ms`,
      `${formatNumber(l.p99, 3)} ms`,
      // A start waits for its commit (one fsync): held to a write's bound, the reads to 5 ms.
      `< ${limitOf(s.page)} ms p99`,
      mark(l.p99 < limitOf(s.page)),
      times(l.p99 / s.p99),
    ];
  });
  return formatTable(header, rows);
}

/** Runs waiting for a human: what they hold and cost at a small and a large number, and a million extrapolated. */
export function formatWaitingScaling(small: WaitingScale, large: WaitingScale): string {
  const perMillion = (value: number) => (value / large.runs) * 1_000_000;
  const header = [
    'waiting runs',
    formatNumber(small.runs),
    formatNumber(large.runs),
    '1,000,000 (extrapolated)',
    'target',
    '',
  ];
  const mib = (value: number) => `${formatNumber(Math.max(0, value), 1)} MiB`;
  const rows = [
    [
      'heap held (over an empty file)',
      mib(small.heapMiB),
      mib(large.heapMiB),
      mib(perMillion(large.heapMiB)),
      '≤ 100 MiB',
      mark(perMillion(large.heapMiB) <= 100),
    ],
    [
      'RSS held (over an empty file)',
      mib(small.rssMiB),
      mib(large.rssMiB),
      mib(perMillion(large.rssMiB)),
      '≤ 100 MiB',
      mark(perMillion(large.rssMiB) <= 100),
    ],
    [
      'open the file',
      `${formatNumber(small.openMs, 1)} ms`,
      `${formatNumber(large.openMs, 1)} ms`,
      `${formatNumber(perMillion(large.openMs), 0)} ms`,
      '< 1,000 ms',
      mark(perMillion(large.openMs) < 1_000),
    ],
    [
      'approve → succeeded (median)',
      `${formatNumber(small.approveMs, 1)} ms`,
      `${formatNumber(large.approveMs, 1)} ms`,
      '',
      '≈ 5 ms',
      mark(large.approveMs < 10),
    ],
    ['runs held in memory', String(small.liveRuns), String(large.liveRuns), '', '0', mark(large.liveRuns === 0)],
    ['timers held', String(small.wakeTimers), String(large.wakeTimers), '', '≤ 1', mark(large.wakeTimers <= 1)],
  ];
  return formatTable(header, rows);
}

/** One long run's steps: early and late step time, and stored bytes per step, for each run length and output size. */
export function formatStepCost(costs: readonly StepCost[]): string {
  const header = [
    'one run',
    'ms/step, steps 5-15',
    'ms/step, last 10',
    'late ÷ early',
    'target',
    '',
    'steps table B/step',
    'all rows B/step',
  ];
  const rows = costs.map((c) => {
    const ratio = c.lateMs / c.earlyMs;
    // A run too short to have early and late steps still says what it stores per step.
    const timed = c.steps >= 25;
    return [
      `${formatNumber(c.steps)} steps, ${c.outputBytes >= 1_000 ? `${formatNumber(c.outputBytes / 1_000)} KB` : `${c.outputBytes} B`} outputs`,
      timed ? formatNumber(c.earlyMs, 3) : '–',
      timed ? formatNumber(c.lateMs, 3) : '–',
      timed ? times(ratio) : '–',
      timed ? '≤ 1.5×' : '',
      timed ? mark(ratio <= 1.5) : '',
      formatNumber(c.stepBytesPerStep),
      formatNumber(c.storedBytesPerStep),
    ];
  });
  return formatTable(header, rows);
}

/** Bursts of start() calls: when the first and last resolve, and the longest stall of the event loop meanwhile. */
export function formatBursts(bursts: readonly Burst[]): string {
  const header = ['start() burst', 'first resolves', 'last resolves', 'longest loop stall', 'target', ''];
  const rows = bursts.map((b) => [
    `${formatNumber(b.runs)} at once`,
    `${formatNumber(b.firstMs, 1)} ms`,
    `${formatNumber(b.lastMs, 1)} ms`,
    `${formatNumber(b.longestStallMs, 1)} ms`,
    '≤ ~50 ms',
    mark(b.longestStallMs <= 60),
  ]);
  return formatTable(header, rows);
}
