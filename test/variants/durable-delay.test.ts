/**
 * Durable delays in a variant: the instant is stored in the snapshot and re-armed on restore,
 * so a restart neither loses the delay nor starts it over.
 */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { expiringApproval } from '../fixtures/expiring-approval.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';
import { scaled } from '../helpers/limits.js';

const DELAY_MS = 4_000;
/** Longer for the child process: its run must still be waiting when the parent reopens the file. */
const KILL_DELAY_MS = 8_000;
const CHILD = fileURLToPath(new URL('../helpers/delay-child.ts', import.meta.url));

/** An approval that expires: nobody decided within DELAY_MS, the run ends `failed` (`timeout`). */
const expiring = expiringApproval(DELAY_MS);

function setup(db: string, effects: string): RuntimeOptions {
  return {
    database: db,
    machine: expiring,
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'send' } }] },
      { type: 'final', answer: 'sent' },
    ]),
    tools: [createWorld(effects, { risk: 'high' }).unsafe],
  };
}

/** The instant the delay stored in the run's persisted snapshot. */
async function storedInstant(runtime: ReturnType<typeof openRuntime>, runId: string): Promise<number> {
  const snapshot = JSON.parse((await storeOf(runtime).getRun(runId))!.snapshot) as {
    context: { timers?: Record<string, number> };
  };
  const at = snapshot.context.timers?.approval;
  expect(at).toBeTypeOf('number');
  return at!;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = scaled(60_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a durable delay in a variant', () => {
  it('fires at its stored instant after a restart that outlived it, not a full delay later', async () => {
    const { db, effects } = tempFiles();
    const options = setup(db, effects);
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('waiting_human');
    const at = await storedInstant(runtime, run.id);
    expect(at - run.updatedAt).toBeLessThanOrEqual(DELAY_MS + 1_000);

    await runtime.close();
    // Down past the instant: the delay must not be lost, nor started over from the restart.
    await until(() => Date.now() > at + 500);
    const reopenedAt = Date.now();
    runtime = await restart(runtime, options);
    const ended = await runtime.wait(run.id);
    expect(ended).toMatchObject({
      status: 'failed',
      stopReason: 'timeout',
      failure: { message: 'Nobody decided in time' },
    });
    const fired = (await eventsOf(runtime, run.id)).find((e) => e.type === 'state' && e.data.to === 'failed')!;
    expect(fired.createdAt).toBeGreaterThanOrEqual(at);
    expect(fired.createdAt - reopenedAt).toBeLessThan(DELAY_MS);
    expect(readEffects(effects)).toEqual([]);
  });

  it('keeps its instant across a restart before it, and is forgotten once a human decides', async () => {
    const { db, effects } = tempFiles();
    const options = setup(db, effects);
    let runtime = openRuntime(options);
    const expiring = await runtime.wait((await runtime.start({ input: 'x', sessionId: 'a' })).id);
    const at = await storedInstant(runtime, expiring.id);
    const decided = await runtime.wait((await runtime.start({ input: 'y', sessionId: 'b' })).id);

    runtime = await restart(runtime, options);
    // Re-armed from the stored instant, not from the restart.
    expect(await storedInstant(runtime, expiring.id)).toBe(at);
    await runtime.approve(decided.id, decided.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(decided.id)).status).toBe('succeeded');
    const done = JSON.parse((await storeOf(runtime).getRun(decided.id))!.snapshot) as { context: { timers: object } };
    expect(done.context.timers).toEqual({});

    await until(async () => (await runtime.get(expiring.id)).status === 'failed');
    expect(await runtime.get(expiring.id)).toMatchObject({ status: 'failed', stopReason: 'timeout' });
    const fired = (await eventsOf(runtime, expiring.id)).find((e) => e.type === 'state' && e.data.to === 'failed')!;
    expect(fired.createdAt).toBeGreaterThanOrEqual(at);
    // The approved run's effect happened once; the expired one's never.
    expect(readEffects(effects)).toHaveLength(1);
  });

  it(
    'fires at its stored instant after the process that armed it was SIGKILLed',
    { timeout: scaled(120_000) },
    async () => {
      const { db, effects } = tempFiles();
      const child = await spawnUntilJsonLine<{ run_id: string; status: string; at: number }>(CHILD, [
        JSON.stringify({ db, effects, delay_ms: KILL_DELAY_MS }),
      ]);
      expect(child.first.status).toBe('waiting_human');
      expect(await child.kill()).toBe('SIGKILL');
      const { run_id: runId, at } = child.first;
      // Reopened halfway to the instant, so "at the instant" and "a full delay after the reopen"
      // are seconds apart: it must wait for the instant, neither fire at once nor start over.
      await until(() => Date.now() >= at - KILL_DELAY_MS / 2);
      const reopenedAt = Date.now();
      expect(reopenedAt).toBeLessThan(at);
      const runtime = openRuntime({ ...setup(db, effects), machine: expiringApproval(KILL_DELAY_MS) });
      await runtime.ready;
      expect(runtime.recoveryFailures.size).toBe(0);
      await until(async () => (await runtime.get(runId)).status === 'failed');
      const fired = (await eventsOf(runtime, runId)).find((e) => e.type === 'state' && e.data.to === 'failed')!;
      expect(fired.createdAt).toBeGreaterThanOrEqual(at);
      expect(fired.createdAt).toBeLessThan(reopenedAt + KILL_DELAY_MS);
      expect(await runtime.get(runId)).toMatchObject({
        stopReason: 'timeout',
        failure: { message: 'Nobody decided in time' },
      });
      expect(readEffects(effects)).toEqual([]);
    },
  );
});
