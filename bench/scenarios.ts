/**
 * The scenarios of `npm run bench` and their targets: a 5-step tool loop, sequential and with
 * 50 runs in flight, for a `read` and an `unsafe` tool, each on a fresh database file.
 */
import { join } from 'node:path';
import type { Effect } from '../src/index.js';
import { createBenchRuntime } from './bench-runtime.js';
import { measureThroughput, type Throughput } from './measure-throughput.js';

/** Tool steps per run in the throughput scenarios (then one final answer). */
export const LOOP_STEPS = 5;

/** Step counts whose snapshot sizes are compared, and how much larger the longer one may be. */
export const SNAPSHOT_STEPS = [5, 50] as const;
export const SNAPSHOT_MAX_RATIO = 1.1;

/** One timed scenario and the runs/s it should reach. */
export interface Scenario {
  name: string;
  effect: Effect;
  concurrency: number;
  /** The runs/s it should reach; null for a figure reported for comparison only. */
  targetRunsPerSecond: number | null;
  /** The planner's answer is journaled every step, as a model's is (see `createBenchRuntime`). */
  modelLike?: boolean;
}

/** Every timed scenario, in the order they run and print. */
export const SCENARIOS: readonly Scenario[] = [
  // First: the figure comparable to durable runtimes that checkpoint every step of a model-driven loop.
  {
    name: 'model-like planner, sequential, unsafe tool',
    effect: 'unsafe',
    concurrency: 1,
    targetRunsPerSecond: null,
    modelLike: true,
  },
  {
    name: 'model-like planner, 50 concurrent, unsafe tool',
    effect: 'unsafe',
    concurrency: 50,
    targetRunsPerSecond: null,
    modelLike: true,
  },
  { name: 'sequential, read tool', effect: 'read', concurrency: 1, targetRunsPerSecond: 200 },
  { name: 'sequential, unsafe tool', effect: 'unsafe', concurrency: 1, targetRunsPerSecond: 150 },
  { name: '50 concurrent, read tool', effect: 'read', concurrency: 50, targetRunsPerSecond: 800 },
  { name: '50 concurrent, unsafe tool', effect: 'unsafe', concurrency: 50, targetRunsPerSecond: 800 },
];

/** A scenario with what it measured. */
export interface ScenarioResult extends Throughput {
  scenario: Scenario;
}

/** Runs one scenario on its own file in `dir`, and closes its runtime whatever happens. */
export async function runScenario(dir: string, scenario: Scenario, durationMs: number): Promise<ScenarioResult> {
  const file = `${scenario.effect}-x${scenario.concurrency}${scenario.modelLike ? '-model' : ''}.db`;
  const runtime = createBenchRuntime({
    database: join(dir, file),
    effect: scenario.effect,
    steps: LOOP_STEPS,
    modelLike: scenario.modelLike === true,
  });
  try {
    const throughput = await measureThroughput(runtime, { concurrency: scenario.concurrency, durationMs });
    return { scenario, ...throughput };
  } finally {
    await runtime.close();
  }
}

/** Drives throwaway runs for a while, so the first scenario does not pay for module loading and JIT warm-up. */
export async function warmUp(dir: string, durationMs: number): Promise<void> {
  const runtime = createBenchRuntime({ database: join(dir, 'warm-up.db'), effect: 'read', steps: LOOP_STEPS });
  try {
    for (const concurrency of [1, 50]) {
      await measureThroughput(runtime, { concurrency, durationMs: durationMs / 2, warmupRuns: 0 });
    }
  } finally {
    await runtime.close();
  }
}
