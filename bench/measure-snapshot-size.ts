/**
 * Snapshot bytes of finished runs by the number of tool steps they took. The context holds
 * counters and ids only (history lives in its own tables), so the size must not grow with steps.
 */
import { join } from 'node:path';
import type { Effect } from '../src/index.js';
import { createBenchRuntime } from './bench-runtime.js';
import { runOnce } from './measure-throughput.js';

/** The snapshot size of runs that made `steps` tool steps. */
export interface SnapshotSize {
  steps: number;
  runs: number;
  /** Largest `runs.snapshot`, in UTF-8 bytes, over those runs. */
  bytes: number;
}

/** Runs `runs` tool loops of `steps` steps on a fresh file in `dir` and reads their stored snapshots. */
export async function measureSnapshotSize(
  dir: string,
  steps: number,
  options: { runs?: number; effect?: Effect } = {},
): Promise<SnapshotSize> {
  const runs = options.runs ?? 5;
  const runtime = createBenchRuntime({
    database: join(dir, `snapshot-${steps}-steps.db`),
    effect: options.effect ?? 'read',
    steps,
  });
  try {
    const ids: string[] = [];
    // Above the default limit (25), so a 50-step loop can finish.
    for (let i = 0; i < runs; i += 1) ids.push(await runOnce(runtime, { maxSteps: 100 }));
    const bytes = Math.max(...(await Promise.all(ids.map(async (id) => (await runtime.checkpoint(id)).bytes))));
    return { steps, runs, bytes };
  } finally {
    await runtime.close();
  }
}
