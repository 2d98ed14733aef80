/**
 * Crashes that matter are real: a child process drives a run and is SIGKILLed at a named
 * point; the run is then resumed from the file and the outside world is checked.
 */
import { describe, expect, it } from 'vitest';
import { EFFECTS, type Effect, type Runtime } from '../../src/index.js';
import { crashPlanner, runChild, type CrashScenario } from '../helpers/crash-scenario.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';

const KILL_POINTS = ['planner.answered', 'tool.started', 'tool.effect', 'tool.returned'] as const;
type KillPoint = (typeof KILL_POINTS)[number];

async function crashAndReopen(scenario: CrashScenario, point: KillPoint | null, failpoints?: string) {
  const outcome = await runChild(
    { ...scenario, killAfterEffect: point === 'tool.effect' },
    failpoints ?? (point && point !== 'tool.effect' ? `${point}=kill` : ''),
  );
  expect(outcome.signal, outcome.stderr).toBe('SIGKILL');
  const runtime = openRuntime({
    database: scenario.db,
    planner: crashPlanner(scenario.tool),
    tools: createWorld(scenario.effects, { risk: scenario.risk ?? 'low' }).all(),
  });
  const [run] = (await runtime.list()).runs;
  expect(run).toBeDefined();
  return { runtime, runId: run!.id };
}

async function checkInvariants(runtime: Runtime, runId: string): Promise<void> {
  const events = await eventsOf(runtime, runId);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const terminal = events.findIndex((e) => e.type === 'state' && ['succeeded', 'failed'].includes(String(e.data.to)));
  if (terminal >= 0) expect(terminal).toBe(events.length - 1);
  expect(storeOf(runtime).db.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
}

/** How many times the effect happened, counted outside Baton, as the design requires. */
function expectedEffects(effect: Effect, point: KillPoint): number {
  if (point === 'planner.answered' || point === 'tool.started') return 1;
  // The effect happened before the crash: only a `read` tool runs again.
  return effect === 'read' ? 2 : 1;
}

describe('crash recovery (SIGKILL of a child process)', () => {
  for (const point of KILL_POINTS) {
    for (const effect of EFFECTS) {
      it(`resumes a ${effect} tool killed at ${point}`, async () => {
        const files = tempFiles();
        const scenario: CrashScenario = { db: files.db, effects: files.effects, tool: `world.${effect}` };
        const { runtime, runId } = await crashAndReopen(scenario, point);
        let run = await runtime.wait(runId);
        const interrupted = effect === 'unsafe' && point !== 'planner.answered';
        if (interrupted) {
          // Never retried automatically: a human learns that the effect is uncertain.
          expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
          const happened = readEffects(files.effects).length;
          expect(happened).toBe(point === 'tool.started' ? 0 : 1);
          expect((await storeOf(runtime).listToolCalls(runId))[0]!.status).toBe('unknown');
          // The human checks the outside world: retry if it did not happen, record it as done if it did.
          await runtime.approve(runId, run.pendingApprovalId!, {
            by: 'ops',
            resolution: happened ? 'done' : 'retry',
          });
          run = await runtime.wait(runId);
        }
        expect(run.status).toBe('succeeded');
        expect(run.id).toBe(runId);
        const effects = readEffects(files.effects);
        expect(effects).toHaveLength(expectedEffects(effect, point));
        if (effect !== 'read') expect(new Set(effects.map((e) => e.key)).size).toBe(effects.length);
        expect((await storeOf(runtime).listToolCalls(runId))[0]!.status).toBe('succeeded');
        await checkInvariants(runtime, runId);
      });
    }
  }

  it('keeps waiting_human across a SIGKILL, then runs the approved call exactly once', async () => {
    const files = tempFiles();
    const scenario: CrashScenario = {
      db: files.db,
      effects: files.effects,
      tool: 'world.unsafe',
      risk: 'high',
      dieWhenSettled: true,
    };
    const { runtime, runId } = await crashAndReopen(scenario, null);
    const run = await runtime.wait(runId);
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'approval' });
    expect(readEffects(files.effects)).toEqual([]);
    await runtime.approve(runId, run.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(runId)).status).toBe('succeeded');
    expect(readEffects(files.effects)).toHaveLength(1);
    await checkInvariants(runtime, runId);
  });

  it('resumes a run whose approval was committed just before the process died', async () => {
    const files = tempFiles();
    const scenario: CrashScenario = {
      db: files.db,
      effects: files.effects,
      tool: 'world.unsafe',
      risk: 'high',
      approveThenDie: true,
    };
    const { runtime, runId } = await crashAndReopen(scenario, null, 'approval.committed=kill');
    const run = await runtime.wait(runId);
    expect(run.status).toBe('succeeded');
    expect(readEffects(files.effects)).toHaveLength(1);
    expect((await runtime.approvals(runId))[0]).toMatchObject({ status: 'approved', decidedBy: 'child' });
    await expect(
      runtime.approve(runId, run.pendingApprovalId ?? (await runtime.approvals(runId))[0]!.id, { by: 'x' }),
    ).rejects.toMatchObject({ code: 'approval.already_decided' });
    await checkInvariants(runtime, runId);
  });

  it('resumes a run acknowledged just before the process died', async () => {
    const files = tempFiles();
    const scenario: CrashScenario = { db: files.db, effects: files.effects, tool: 'world.idempotent' };
    const { runtime, runId } = await crashAndReopen(scenario, null, 'run.created=kill');
    expect((await runtime.wait(runId)).status).toBe('succeeded');
    expect(readEffects(files.effects)).toHaveLength(1);
    await checkInvariants(runtime, runId);
  });
});
