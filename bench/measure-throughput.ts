/**
 * Runs/s of one runtime: `concurrency` workers each start a run and wait for it, again and
 * again, until the time is up (1 worker = strictly sequential). Every run must succeed.
 */
import type { Runtime } from '../src/index.js';
import { cpuBetween, sampleCpu } from './machine-load.js';

/** What one timed window measured; commits and checkpoints count the timed runs only. */
export interface Throughput {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  /** Group-commit transactions in the window (`runtime.stats().commits`). */
  commits: number;
  /** Snapshot writes of the timed runs (the `runs.version` each ended with). */
  checkpoints: number;
  /** State transitions of the timed runs, each durable as a committed `state` event. */
  transitions: number;
  /** CPU time of this process in the window. */
  cpuMs: number;
  /** CPUs' worth of work done by other processes in the window (null if unknown). */
  otherCpus: number | null;
}

/** Thrown when a benchmark run does not end `succeeded`: the numbers would mean nothing. */
export class BenchRunError extends Error {}

/** Starts one run, waits for it, and returns its id once it has succeeded. */
export async function runOnce(runtime: Runtime, options?: { maxSteps: number }): Promise<string> {
  const started = await runtime.start({ input: 'Look up the notes', ...(options ? { options } : {}) });
  const run = await runtime.wait(started.id);
  if (run.status !== 'succeeded') {
    const why = run.failure ? `${run.failure.code}: ${run.failure.message}` : (run.stopReason ?? 'no failure recorded');
    throw new BenchRunError(`Run '${run.id}' ended '${run.status}' instead of 'succeeded' (${why})`);
  }
  return run.id;
}

/** Keeps `concurrency` runs in flight until `isDone()`; in-flight runs are waited for. */
async function pool(runtime: Runtime, concurrency: number, isDone: () => boolean): Promise<string[]> {
  const ids: string[] = [];
  let failed = false;
  const worker = async (): Promise<void> => {
    try {
      while (!failed && !isDone()) ids.push(await runOnce(runtime));
    } catch (error) {
      // One failed run is enough to abort: the other workers stop starting new ones.
      failed = true;
      throw error;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

/**
 * Warms up with a few runs, then keeps `concurrency` runs in flight for `durationMs`.
 * @example
 * const { runsPerSecond } = await measureThroughput(runtime, { concurrency: 50, durationMs: 3_000 });
 */
export async function measureThroughput(
  runtime: Runtime,
  options: { concurrency: number; durationMs: number; warmupRuns?: number },
): Promise<Throughput> {
  const warmup = options.warmupRuns ?? Math.max(30, options.concurrency * 4);
  let started = 0;
  await pool(runtime, options.concurrency, () => started++ >= warmup);

  const commitsBefore = runtime.stats().commits;
  const before = sampleCpu();
  const deadline = before.at + options.durationMs;
  const ids = await pool(runtime, options.concurrency, () => performance.now() >= deadline);
  const after = sampleCpu();
  const commits = runtime.stats().commits - commitsBefore;
  const seconds = (after.at - before.at) / 1_000;
  const { ownMs, otherCpus } = cpuBetween(before, after);

  const versionOf = async (id: string) => (await runtime.checkpoint(id)).version;
  const stateEventsOf = async (id: string) =>
    (await runtime.readEvents(id, { limit: 10_000 })).filter((event) => event.type === 'state').length;
  const sum = async (count: (id: string) => Promise<number>) =>
    (await Promise.all(ids.map(count))).reduce((total, n) => total + n, 0);
  return {
    runs: ids.length,
    seconds,
    runsPerSecond: ids.length / seconds,
    commits,
    checkpoints: await sum(versionOf),
    transitions: await sum(stateEventsOf),
    cpuMs: ownMs,
    otherCpus,
  };
}
