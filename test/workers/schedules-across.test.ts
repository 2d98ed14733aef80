/**
 * A schedule ticking every second across two worker processes on PostgreSQL: 30 ticks start 30
 * runs, one per tick, none twice, whichever worker takes each. Then both workers are SIGKILLed
 * and stay down for 10 s: once they are back, the ticks missed meanwhile start exactly what
 * `catchUp` says — none with `none`, one (the latest missed) with `one` — and ticking goes on.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, createScriptedPlanner, type Run, type Runtime } from '../../src/index.js';
import { freshDatabaseOf } from '../helpers/dialects.js';
import { scaled } from '../helpers/limits.js';
import { hasPostgres } from '../helpers/pg.js';
import { spawnUntilJsonLine, type RunningChild } from '../helpers/spawn-child.js';
import { waitUntil } from '../helpers/wait-until.js';
import type { WorkerChildConfig } from '../helpers/worker-child.js';

const CHILD = fileURLToPath(new URL('../helpers/worker-child.ts', import.meta.url));
const TICKS = 30;
const DOWN_MS = 10_000;

async function runsOf(runtime: Runtime, id: string): Promise<Run[]> {
  const { runs } = await runtime.list({ metadata: { 'baton.schedule': id }, limit: 500 });
  return runs;
}
const tickOf = (run: Run) => Number(run.metadata['baton.tick']);

describe.skipIf(!hasPostgres())('a schedule across two workers on PostgreSQL', () => {
  it(
    `starts one run per tick for ${TICKS} ticks, and after ${DOWN_MS / 1000} s down exactly what catchUp says`,
    { timeout: scaled(240_000) },
    async () => {
      const { database, effects } = await freshDatabaseOf('postgres');
      const config: WorkerChildConfig = { database, effects, steps: 0, pauseMs: 0, leaseMs: 2_000, claimEveryMs: 200 };
      // An API-only runtime: it stores the schedules and reads; only the workers tick them.
      const api = createRuntime({ database, planner: createScriptedPlanner([]), tools: [], drive: false });
      const workers: RunningChild<{ owner: string }>[] = [];
      const spawnBoth = async () => {
        for (let i = 0; i < 2; i += 1) workers.push(await spawnUntilJsonLine(CHILD, [JSON.stringify(config)]));
      };
      try {
        await spawnBoth();
        const one = await api.schedule({ id: 'one', every: 1_000, input: 'tick', catchUp: 'one', overlap: 'allow' });
        await api.schedule({ id: 'none', every: 1_000, input: 'tick', catchUp: 'none', overlap: 'allow' });
        await waitUntil(async () => (await runsOf(api, 'one')).length >= TICKS, `${TICKS} ticks`, scaled(120_000));
        const upTo = (await runsOf(api, 'one')).map(tickOf).sort((a, b) => a - b);
        // One run per tick, every tick from the first: no tick left out, none started twice.
        expect(upTo.slice(0, TICKS)).toEqual(Array.from({ length: TICKS }, (_, k) => one.createdAt + (k + 1) * 1_000));

        for (const worker of workers.splice(0)) expect(await worker.kill()).toBe('SIGKILL');
        const killedAt = Date.now();
        await waitUntil(() => Date.now() >= killedAt + DOWN_MS, 'the downtime', scaled(60_000));
        await spawnBoth();
        await waitUntil(
          async () =>
            (await Promise.all(['one', 'none'].map((id) => runsOf(api, id)))).every(
              (runs) => runs.filter((r) => tickOf(r) > killedAt + DOWN_MS).length >= 3,
            ),
          'three ticks of each after the restart',
        );
        for (const id of ['one', 'none']) {
          const runs = await runsOf(api, id);
          const ticks = runs.map(tickOf).sort((a, b) => a - b);
          // One run per tick, never two.
          expect(new Set(ticks).size).toBe(ticks.length);
          const lastBefore = Math.max(...ticks.filter((t) => t <= killedAt));
          const after = runs.filter((r) => tickOf(r) > lastBefore).sort((a, b) => tickOf(a) - tickOf(b));
          const caughtUp = after.filter((r) => r.metadata['baton.catch_up'] === true);
          // The downtime's ticks: none started with `none`; with `one`, exactly one, the latest
          // missed, a tick before the first one on time; ticking goes on a second apart after it.
          expect(caughtUp).toHaveLength(id === 'one' ? 1 : 0);
          const onTime = after.filter((r) => r.metadata['baton.catch_up'] !== true).map(tickOf);
          expect(onTime[0]! - lastBefore).toBeGreaterThanOrEqual(DOWN_MS);
          if (id === 'one') {
            expect(tickOf(caughtUp[0]!)).toBe(onTime[0]! - 1_000);
            expect(tickOf(caughtUp[0]!)).toBeGreaterThan(killedAt);
          }
          expect(after.filter((r) => tickOf(r) < onTime[0]!)).toEqual(caughtUp);
          for (let i = 1; i < onTime.length; i += 1) expect(onTime[i]! - onTime[i - 1]!).toBe(1_000);
          const schedule = await api.getSchedule(id);
          const missed = (onTime[0]! - lastBefore) / 1_000 - 1;
          expect(schedule.skipped).toBe(id === 'one' ? missed - 1 : missed);
          for (const run of runs) expect((await api.wait(run.id)).status).toBe('succeeded');
          console.log(
            `schedule '${id}' across two workers: ${ticks.length} runs, one per tick; ${missed} ticks missed in the ` +
              `downtime started ${caughtUp.length} run(s)`,
          );
        }
      } finally {
        for (const worker of workers) await worker.kill();
        await api.close();
      }
    },
  );
});
