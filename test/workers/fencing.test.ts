/**
 * Fencing on PostgreSQL: worker A claims a run and then stalls (its whole process blocked, as in
 * a long GC pause) past its lease; worker B claims the run and drives it to its end. When A wakes,
 * its late write is fenced off: it changes nothing, and A stops driving the run. The log stays
 * contiguous and the call A was making took effect once.
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createRuntime, createScriptedPlanner } from '../../src/index.js';
import { freshDatabaseOf } from '../helpers/dialects.js';
import { runProblems } from '../helpers/invariants.js';
import { hasPostgres } from '../helpers/pg.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import type { WorkerChildConfig } from '../helpers/worker-child.js';
import { workerPlanner } from '../helpers/worker-plan.js';
import { createWorldTools } from '../helpers/world-tools.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

const CHILD = fileURLToPath(new URL('../helpers/worker-child.ts', import.meta.url));
const LEASE_MS = 1_000;

describe.skipIf(!hasPostgres())('fencing on PostgreSQL', () => {
  it(
    "ignores a stalled worker's late write after another worker claimed its run",
    { timeout: scaled(120_000) },
    async () => {
      const { database, effects } = await freshDatabaseOf('postgres');
      const config: WorkerChildConfig = {
        database,
        effects,
        steps: 2,
        pauseMs: 20,
        leaseMs: LEASE_MS,
        claimEveryMs: 100,
        stallMs: 5 * LEASE_MS,
      };
      const api = createRuntime({ database, planner: createScriptedPlanner([]), tools: [], drive: false });
      const db = new pg.Client({ connectionString: database });
      await db.connect();
      const a = await spawnUntilJsonLine<{ owner: string }>(CHILD, [JSON.stringify(config)]);
      let b: ReturnType<typeof createRuntime> | undefined;
      try {
        const run = await api.start({ input: 'fenced' });
        // A holds the run and is blocked inside its first idempotent call ('started' is durable).
        await expect.poll(() => a.lines().some((l) => l.type === 'stall'), { timeout: scaled(60_000) }).toBe(true);
        const held = await db.query<{ owner: string; epoch: number }>(
          'select owner, epoch::int as epoch from runs where id = $1',
          [run.id],
        );
        expect(held.rows[0]!.owner).toBe(a.first.owner);

        // B, alive and well, claims the run once A's lease lapses and drives it to its end.
        b = createRuntime({
          database,
          planner: workerPlanner(config.steps),
          tools: createWorldTools(effects, { pause: () => ({ before: config.pauseMs, after: 0 }) }),
          leaseMs: LEASE_MS,
          claimEveryMs: 100,
        });
        expect((await api.wait(run.id)).status).toBe('succeeded');
        expect(a.lines().some((l) => l.type === 'stalled')).toBe(false);
        const claimed = await db.query<{ owner: string; epoch: number }>(
          'select owner, epoch::int as epoch from runs where id = $1',
          [run.id],
        );
        expect(claimed.rows[0]!.owner).toBe(b.owner);
        expect(claimed.rows[0]!.epoch).toBeGreaterThan(held.rows[0]!.epoch);
        const logged = (await api.readEvents(run.id, { limit: 10_000 })).length;

        // A wakes up, finishes its call, and its write is refused: it stops driving the run.
        await expect
          .poll(
            () => {
              const lines = a.lines();
              const woke = lines.findIndex((l) => l.type === 'stalled');
              return woke >= 0 && lines.slice(woke + 1).some((l) => l.type === 'stats' && l.live === 0);
            },
            { timeout: scaled(60_000) },
          )
          .toBe(true);
        // Its late write changed nothing: the log is as B left it, the row B's.
        expect((await api.readEvents(run.id, { limit: 10_000 })).length).toBe(logged);
        expect((await api.get(run.id)).status).toBe('succeeded');
        const after = await db.query<{ owner: string; epoch: number }>(
          'select owner, epoch::int as epoch from runs where id = $1',
          [run.id],
        );
        expect(after.rows[0]).toEqual(claimed.rows[0]);
        const world = readEffects(effects);
        expect(world.filter((e) => e.key === `${run.id}.s0.c1`)).toHaveLength(1);
        expect(await runProblems(api, run.id, world)).toEqual([]);
      } finally {
        await a.kill();
        await b?.close();
        await db.end();
        await api.close();
      }
    },
  );
});
