/**
 * The kill soak on PostgreSQL with two workers: two child processes share one database, each
 * starting and deciding its half of a seeded set of runs while both claim and drive any run; one
 * of them, picked at random, is SIGKILLed at a random instant and restarted, again and again.
 * Then both drain their halves without kills, and every run is held to the invariants (no lost
 * run, no stuck run, no unsafe effect twice, contiguous events) and to its plan.
 * Replay or enlarge with SOAK_SEED, SOAK_RUNS and SOAK_KILLS.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, type Run } from '../../src/index.js';
import { freshDatabaseOf } from '../helpers/dialects.js';
import { runProblems } from '../helpers/invariants.js';
import { hasPostgres } from '../helpers/pg.js';
import { between, mulberry32, seedOf } from '../helpers/prng.js';
import type { SoakScenario } from '../helpers/soak-child.js';
import { journalOf, soakPauses, soakPlan, soakPlanner } from '../helpers/soak-plan.js';
import { spawnChild, type ChildOutcome } from '../helpers/spawn-child.js';
import { tempDir } from '../helpers/temp.js';
import { createWorldTools } from '../helpers/world-tools.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

const SEED = Number(process.env.SOAK_SEED ?? 2_311);
const RUNS = Number(process.env.SOAK_RUNS ?? 100);
const KILLS = Number(process.env.SOAK_KILLS ?? 50);
const CHILD = fileURLToPath(new URL('../helpers/soak-child.ts', import.meta.url));
/** A kill lands this long after the previous one (a child's start-up takes about 500 ms). */
const KILL_EVERY_MS = [300, 1_200] as const;
const LEASE_MS = 1_500;
const DRAIN_MS = scaled(60_000 + RUNS * 600);
const TEST_MS = Math.max(scaled(240_000), scaled(KILLS * 2_000 + 60_000) + DRAIN_MS);

describe.skipIf(!hasPostgres())('kill soak on PostgreSQL, two workers', () => {
  it(
    `keeps every invariant of ${RUNS} runs through ${KILLS} SIGKILLs of either worker (SOAK_SEED=${SEED})`,
    async () => {
      const started = Date.now();
      const { database, effects } = await freshDatabaseOf('postgres');
      const dir = tempDir();
      const scenarioOf = (index: number): SoakScenario => ({
        db: database,
        effects,
        journal: `${dir}/journal.jsonl`,
        seed: SEED,
        runs: RUNS,
        concurrency: 3,
        partition: { index, of: 2 },
        leaseMs: LEASE_MS,
        claimEveryMs: 200,
      });
      const tag = `SOAK_SEED=${SEED} SOAK_RUNS=${RUNS} SOAK_KILLS=${KILLS}`;
      const problems: string[] = [];
      const report = (slot: number, child: ChildOutcome) => {
        if (child.signal !== 'SIGKILL' && child.code !== 0) {
          problems.push(`worker ${slot} exited with ${child.code}: ${child.stderr.slice(0, 2000)}`);
        }
      };

      // Both workers run all along; one of them, at random, is killed and started again.
      const random = mulberry32(seedOf(SEED, 'pg-kills'));
      const spawnSlot = (slot: number, killAfterMs?: number) =>
        spawnChild(CHILD, [JSON.stringify(scenarioOf(slot))], {
          ...(killAfterMs === undefined ? {} : { killAfterMs }),
          timeoutMs: DRAIN_MS,
        });
      let landed = 0;
      const slots: Promise<void>[] = [0, 1].map(async (slot) => {
        const mine = mulberry32(seedOf(SEED, 'pg-kills', slot));
        for (let kill = slot; kill < KILLS; kill += 2) {
          const child = await spawnSlot(slot, between(mine, ...KILL_EVERY_MS) * 2);
          if (child.signal === 'SIGKILL' && child.killedByParent && !child.timedOut) landed += 1;
          report(slot, child);
          await sleep(between(random, 0, 100));
        }
      });
      await Promise.all(slots);

      // The drain: both workers, no kills, until every run of each half has ended.
      const drains = await Promise.all([0, 1].map((slot) => spawnSlot(slot)));
      drains.forEach((child, slot) => {
        if (child.code !== 0) {
          problems.push(
            `the drain of worker ${slot} ended with ${child.signal ?? child.code}${child.timedOut ? ' (timed out)' : ''}: ${child.stderr.slice(0, 2000)}`,
          );
        }
      });

      const runtime = createRuntime({
        database,
        planner: soakPlanner(SEED),
        tools: createWorldTools(effects, { pause: soakPauses(SEED) }),
        recover: false,
        drive: false,
      });
      const journal = journalOf(`${dir}/journal.jsonl`);
      let succeeded = 0;
      let rejected = 0;
      try {
        for (const line of journal) if (line.type === 'violation') problems.push(`run #${line.index}: ${line.text}`);
        const world = readEffects(effects);
        const runs = new Map<string, Run>();
        for (let cursor: string | null = null, first = true; first || cursor; first = false) {
          const page: { runs: Run[]; nextCursor: string | null } = await runtime.list({
            limit: 200,
            ...(cursor ? { cursor } : {}),
          });
          for (const run of page.runs) if (run.idempotencyKey) runs.set(run.idempotencyKey, run);
          cursor = page.nextCursor;
        }
        if (runs.size !== RUNS) problems.push(`${runs.size} runs in the database, expected ${RUNS}`);
        for (let index = 0; index < RUNS; index += 1) {
          const run = runs.get(`soak-${index}`);
          if (!run) {
            problems.push(`run #${index} was never created`);
            continue;
          }
          const say = (text: string) => problems.push(`run #${index} (${run.id}): ${text}`);
          for (const problem of await runProblems(runtime, run.id, world)) say(problem);
          if (run.status !== 'succeeded' && run.status !== 'failed') {
            say(`is stuck in '${run.status}'`);
            continue;
          }
          const approvals = await runtime.approvals(run.id);
          if (run.status === 'failed') {
            if (run.stopReason === 'rejected' && approvals.some((a) => a.resolution === 'terminate')) rejected += 1;
            else say(`failed: ${run.stopReason} ${JSON.stringify(run.failure)}`);
            continue;
          }
          succeeded += 1;
          const plan = soakPlan(SEED, index);
          if (run.answer !== plan.answer) say(`answered ${JSON.stringify(run.answer)}`);
          const calls = new Map((await runtime.toolCalls(run.id)).map((call) => [call.id, call.status]));
          plan.steps.forEach((planned, step) => {
            const refused = approvals.some((a) => a.stepIndex === step && a.kind === 'tool' && a.status === 'rejected');
            planned.forEach((call, k) => {
              const id = `${run.id}.s${step}.c${k}`;
              const status = calls.get(id) ?? 'missing';
              const expected = !refused ? 'succeeded' : call.risk === 'high' ? 'rejected' : 'skipped';
              if (status !== expected) say(`call ${id} (${call.tool}) is '${status}', expected '${expected}'`);
            });
          });
        }
      } finally {
        await runtime.close();
      }
      const decisions = journal.filter((l) => l.type === 'decision');
      console.log(
        `kill soak (PostgreSQL, 2 workers): ${tag}: ${RUNS} runs (${succeeded} succeeded, ${rejected} ended by a ` +
          `rejection), ${landed}/${KILLS} kills landed, ${decisions.length} decisions, ${problems.length} problems, ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(problems, `replay with ${tag}`).toEqual([]);
      expect(landed).toBeGreaterThanOrEqual(Math.floor(KILLS * 0.8));
    },
    TEST_MS,
  );
});
