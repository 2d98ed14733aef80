/**
 * The kill soak: a child process drives a seeded set of runs (random plans, high-risk calls,
 * an approver that decides twice or concurrently) on one file and is SIGKILLed at seeded random
 * instants, then restarted, again and again; then it drains every run to its end without kills,
 * and every run is held to the invariants of `helpers/invariants.ts` and to its plan.
 * Replay or enlarge with SOAK_SEED, SOAK_RUNS and SOAK_KILLS.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { integrityProblems, runProblems } from '../helpers/invariants.js';
import { between, mulberry32, seedOf } from '../helpers/prng.js';
import type { SoakScenario } from '../helpers/soak-child.js';
import { journalOf, soakPauses, soakPlan, soakPlanner } from '../helpers/soak-plan.js';
import { spawnChild } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorldTools } from '../helpers/world-tools.js';
import { readEffects } from '../helpers/world.js';
import { scopeKey } from '../../src/runtime/model/tenant-keys.js';
import { storeOf } from '../../src/runtime/internals.js';
import { scaled } from '../helpers/limits.js';

const SEED = Number(process.env.SOAK_SEED ?? 1_129);
const RUNS = Number(process.env.SOAK_RUNS ?? 100);
const KILLS = Number(process.env.SOAK_KILLS ?? 50);
const CHILD = fileURLToPath(new URL('../helpers/soak-child.ts', import.meta.url));
/** A kill lands this long after the child was spawned (its start-up takes about 400 ms of it). */
const KILL_AFTER_MS = [250, 1_500] as const;
/** Bounds that grow with SOAK_RUNS and SOAK_KILLS (the defaults take about 45 s on two cores). */
const DRAIN_MS = scaled(30_000 + RUNS * 600);
const TEST_MS = Math.max(scaled(175_000), scaled(KILLS * 2_500 + 30_000) + DRAIN_MS);

describe('kill soak', () => {
  it(
    `keeps every invariant of ${RUNS} runs through ${KILLS} SIGKILLs (SOAK_SEED=${SEED})`,
    async () => {
      const started = Date.now();
      const files = tempFiles();
      const scenario: SoakScenario = {
        db: files.db,
        effects: files.effects,
        journal: `${files.dir}/journal.jsonl`,
        seed: SEED,
        runs: RUNS,
        concurrency: 3,
      };
      const args = [JSON.stringify(scenario)];
      const tag = `SOAK_SEED=${SEED} SOAK_RUNS=${RUNS} SOAK_KILLS=${KILLS}`;
      const problems: string[] = [];

      // The kills: each child is killed at a seeded instant (or ends first if nothing is left to do).
      const random = mulberry32(seedOf(SEED, 'kills'));
      let landed = 0;
      for (let kill = 0; kill < KILLS; kill += 1) {
        const killAfterMs = between(random, ...KILL_AFTER_MS);
        const child = await spawnChild(CHILD, args, { killAfterMs, timeoutMs: scaled(30_000) });
        if (child.signal === 'SIGKILL') landed += 1;
        else if (child.code !== 0)
          problems.push(`child ${kill} exited with ${child.code}: ${child.stderr.slice(0, 2000)}`);
      }

      // The drain: no more kills, until every run has ended.
      const drain = await spawnChild(CHILD, args, { timeoutMs: DRAIN_MS });
      if (drain.code !== 0) {
        problems.push(
          `the drain ended with ${drain.signal ?? drain.code}${drain.timedOut ? ' (timed out)' : ''}: ${drain.stderr.slice(0, 2000)}`,
        );
      }

      const runtime = createRuntime({
        database: files.db,
        planner: soakPlanner(SEED),
        tools: createWorldTools(files.effects, { pause: soakPauses(SEED) }),
        recover: false,
      });
      const journal = journalOf(scenario.journal);
      let succeeded = 0;
      let rejected = 0;
      let uncertain = 0;
      try {
        for (const line of journal) if (line.type === 'violation') problems.push(`run #${line.index}: ${line.text}`);
        const effects = readEffects(files.effects);
        const total = storeOf(runtime).db.sqlite.prepare('select count(*) as n from runs').get() as { n: number };
        if (total.n !== RUNS) problems.push(`${total.n} runs in the file, expected ${RUNS}`);
        for (let index = 0; index < RUNS; index += 1) {
          const row = await storeOf(runtime).findRunByIdempotencyKey(scopeKey(null, `soak-${index}`));
          if (!row) {
            problems.push(`run #${index} was never created`);
            continue;
          }
          const run = await runtime.get(row.id);
          const say = (text: string) => problems.push(`run #${index} (${row.id}): ${text}`);
          for (const problem of await runProblems(runtime, row.id, effects)) say(problem);
          const approvals = await runtime.approvals(row.id);
          uncertain += approvals.filter((a) => a.kind === 'uncertain').length;
          if (run.status === 'failed') {
            // The only way a soak run may fail: the approver ended it.
            if (run.stopReason === 'rejected' && approvals.some((a) => a.resolution === 'terminate')) rejected += 1;
            else say(`failed: ${run.stopReason} ${JSON.stringify(run.failure)}`);
            continue;
          }
          if (run.status !== 'succeeded') continue;
          succeeded += 1;
          const plan = soakPlan(SEED, index);
          if (run.answer !== plan.answer) say(`answered ${JSON.stringify(run.answer)}`);
          // Every planned call ran and succeeded, unless its step's approval was rejected.
          for (const [step, calls] of plan.steps.entries()) {
            const refused = approvals.some((a) => a.stepIndex === step && a.kind === 'tool' && a.status === 'rejected');
            for (const [k, call] of calls.entries()) {
              const id = `${row.id}.s${step}.c${k}`;
              const status = (await storeOf(runtime).getToolCall(id))?.status ?? 'missing';
              const expected = !refused ? 'succeeded' : call.risk === 'high' ? 'rejected' : 'skipped';
              if (status !== expected) say(`call ${id} (${call.tool}) is '${status}', expected '${expected}'`);
            }
          }
        }
        problems.push(...integrityProblems(runtime));
      } finally {
        await runtime.close();
      }

      const decisions = journal.filter((l) => l.type === 'decision');
      const races = decisions.filter((l) => l.concurrent).length;
      const twice = decisions.filter((l) => !l.concurrent && l.copies > 1).length;
      console.log(
        `kill soak: ${tag}: ${RUNS} runs (${succeeded} succeeded, ${rejected} ended by a rejection), ` +
          `${landed}/${KILLS} kills landed, ${decisions.length} decisions (${races} concurrent, ${twice} twice), ` +
          `${uncertain} uncertain side effects, ${problems.length} problems, ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(problems, `replay with ${tag}`).toEqual([]);
    },
    TEST_MS,
  );
});
