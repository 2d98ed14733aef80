/**
 * Retention over time: with pruning, a SQLite file under steady load stops growing (a file
 * without it keeps growing, the control), its freed pages given back by incremental vacuum; and
 * the `retention` option prunes by itself on its schedule, leaving waiting runs alone.
 */
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type PruneReport, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { storeOf } from '../../src/runtime/internals.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { blobTool } from '../helpers/blob-tool.js';
import { createWorld } from '../helpers/world.js';

/** Each run reads a blob of its own (an artifact of ~40 KB) over two steps, then answers; `wait` waits for approval. */
function setup(database: string, effects: string, extra: Partial<RuntimeOptions> = {}): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) => {
      if (request.input === 'wait' && request.stepIndex === 0) {
        return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'x' } }] };
      }
      if (request.stepIndex < 2 && request.input !== 'wait') {
        return {
          type: 'tool_calls',
          calls: [{ tool: 'blob.read', args: { n: Number(request.input) * 10 + request.stepIndex } }],
        };
      }
      return { type: 'final', answer: 'done' };
    }),
    tools: [blobTool(2_500), createWorld(effects, { risk: 'high' }).unsafe],
    ...extra,
  };
}

/** The database file's size once its write-ahead log is folded in and truncated. */
function fileSize(runtime: Runtime, path: string): number {
  storeOf(runtime).db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(path).size;
}

async function cycle(runtime: Runtime, from: number, count: number): Promise<void> {
  const runs = await Promise.all(Array.from({ length: count }, (_, i) => runtime.start({ input: String(from + i) })));
  for (const run of runs) expect((await runtime.wait(run.id)).status).toBe('succeeded');
}

describe('retention', () => {
  it('keeps a SQLite file from growing under steady load, where a file without it grows', async () => {
    const pruned = tempFiles();
    const kept = tempFiles();
    const withRetention = openRuntime(setup(pruned.db, pruned.effects));
    const without = openRuntime(setup(kept.db, kept.effects));
    const sizes = { pruned: [] as number[], kept: [] as number[] };
    let reclaimed = 0;
    const perCycle = 15;
    for (let c = 0; c < 10; c++) {
      await cycle(withRetention, c * perCycle, perCycle);
      await cycle(without, c * perCycle, perCycle);
      // Only the last cycle's runs are kept.
      const report = await withRetention.prune({ finishedBefore: Date.now() + 1_000, keepLast: perCycle });
      if (c > 0) expect(report.runs).toBe(perCycle);
      reclaimed += report.reclaimedBytes;
      sizes.pruned.push(fileSize(withRetention, pruned.db));
      sizes.kept.push(fileSize(without, kept.db));
    }
    // Each cycle stores ~1.2 MB of artifacts: the control grows by about that much every time …
    expect(sizes.kept[9]!).toBeGreaterThan(sizes.kept[2]! * 2.5);
    // … the pruned file stays where it was after its first prunes (30 cycles: 1.90 → 2.02 MB, flat from the 8th), its freed pages given back.
    expect(sizes.pruned[9]!).toBeLessThanOrEqual(sizes.pruned[2]! * 1.15);
    expect(reclaimed).toBeGreaterThan(1_000_000);
    expect((await withRetention.list({ limit: 100 })).runs).toHaveLength(perCycle);
  });

  it('prunes on its schedule with the retention option, and never a waiting run', async () => {
    const files = tempFiles();
    const reports: PruneReport[] = [];
    const runtime = openRuntime(
      setup(files.db, files.effects, {
        retention: { maxAgeMs: 0, everyMs: 20, onPrune: (report) => report && reports.push(report) },
      }),
    );
    const waiting = await runtime.wait((await runtime.start({ input: 'wait' })).id);
    const done: { id: string }[] = [];
    for (let i = 1; i <= 3; i++) done.push(await runtime.wait((await runtime.start({ input: String(i) })).id));
    const gone = async () => {
      for (const run of done)
        if (
          await runtime.get(run.id).then(
            () => true,
            () => false,
          )
        )
          return false;
      return true;
    };
    // Gone from the database, and reported (a report comes once its prune has also given space back).
    const reported = () => reports.reduce((sum, r) => sum + r.runs, 0);
    while (!(await gone()) || reported() < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reports.reduce((sum, r) => sum + r.runs, 0)).toBe(3);
    expect(reports.reduce((sum, r) => sum + r.artifacts, 0)).toBe(6);
    expect((await runtime.get(waiting.id)).status).toBe('waiting_human');
    await runtime.approve(waiting.id, waiting.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(waiting.id)).status).toBe('succeeded');
  });
});
