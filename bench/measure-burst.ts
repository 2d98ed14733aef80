/**
 * Scaling of a burst: `runs` start() calls at once. Reports when the first and the last resolve
 * and the longest the event loop was held until the last did (monitorEventLoopDelay; the runs
 * go on meanwhile), so a burst that resolves all at the end, or stalls the loop, shows.
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRuntime, createScriptedPlanner } from '../src/index.js';

/** What one burst measured (ms). */
export interface Burst {
  runs: number;
  firstMs: number;
  lastMs: number;
  longestStallMs: number;
}

/** Starts `runs` runs at once on a fresh file and waits for all of them to end. */
export async function measureBurst(dir: string, runs: number): Promise<Burst> {
  const runtime = createRuntime({
    database: join(dir, `burst-${runs}.db`),
    planner: createScriptedPlanner([{ type: 'final', answer: 'done' }]),
    tools: [],
  });
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  try {
    histogram.enable();
    const started = performance.now();
    const resolved: number[] = [];
    const all = await Promise.all(
      Array.from({ length: runs }, (_, i) =>
        runtime.start({ input: `burst ${i}`, sessionId: `b${i}` }).then((run) => {
          resolved.push(performance.now() - started);
          return run;
        }),
      ),
    );
    histogram.disable();
    await Promise.all(all.map((run) => runtime.wait(run.id)));
    return {
      runs,
      firstMs: Math.min(...resolved),
      lastMs: Math.max(...resolved),
      longestStallMs: histogram.max / 1e6,
    };
  } finally {
    await runtime.close();
  }
}
