/**
 * A run waiting for a human costs no memory, shown by counting: no actor (`liveRuns`, root
 * actors created), no timer (`wakeTimers`: the one scheduler's), and an open that loads only
 * what is in flight. A decision, a cancel or the deadline loads the run again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { startHeartbeat } from '../../src/runtime/drive/leases.js';
import type { Store } from '../../src/store/index.js';
import { openRuntime, restart } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

function setup(db: string, effects: string, inspect?: (event: InspectionEvent) => void): RuntimeOptions {
  return {
    database: db,
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: request.input } }] }
        : { type: 'final', answer: `sent ${request.input}` },
    ),
    tools: [createWorld(effects, { risk: 'high' }).unsafe],
    ...(inspect ? { inspect } : {}),
  };
}

/** Counts the run actors (roots) a runtime creates: one per run it loads. */
function rootCounter() {
  let roots = 0;
  return {
    inspect(event: InspectionEvent) {
      if (event.type === '@xstate.actor' && event.actorRef.sessionId === event.rootId) roots += 1;
    },
    get roots() {
      return roots;
    },
  };
}

async function startWaiting(options: RuntimeOptions, count: number, timeoutMs?: number) {
  const runtime = openRuntime(options);
  const runs = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      runtime.start({
        input: `v${i}`,
        sessionId: `s${i}`,
        ...(timeoutMs ? { options: { budget: { timeoutMs } } } : {}),
      }),
    ),
  );
  const waiting = await Promise.all(runs.map((run) => runtime.wait(run.id)));
  expect(waiting.every((run) => run.status === 'waiting_human')).toBe(true);
  return { runtime, waiting };
}

describe('runs waiting for a human', () => {
  it('hold no actor and no timer of their own, and a decision loads just the one decided', async () => {
    const { db, effects } = tempFiles();
    const counter = rootCounter();
    const { runtime, waiting } = await startWaiting(setup(db, effects, counter.inspect), 200, 3_600_000);
    expect(counter.roots).toBe(200);
    await expect.poll(() => runtime.stats().liveRuns).toBe(0);
    // Two hundred deadlines, one timer: the scheduler's, for the earliest.
    expect(runtime.stats().wakeTimers).toBe(1);

    const one = waiting[17]!;
    await runtime.approve(one.id, one.pendingApprovalId!, { by: 'alice' });
    expect(await runtime.wait(one.id)).toMatchObject({ status: 'succeeded', answer: 'sent v17' });
    expect(counter.roots).toBe(201);
    expect(readEffects(effects).map((e) => e.value)).toEqual(['v17']);
    expect((await runtime.get(waiting[18]!.id)).status).toBe('waiting_human');
    await expect.poll(() => runtime.stats().liveRuns).toBe(0);

    // A cancel loads the run too, and ends it.
    expect(await runtime.cancel(waiting[3]!.id)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(counter.roots).toBe(202);
  });

  it('are not loaded when the file is opened: only the runs in flight are', async () => {
    const { db, effects } = tempFiles();
    const { runtime, waiting } = await startWaiting(setup(db, effects), 100);
    const counter = rootCounter();
    const reopened = await restart(runtime, setup(db, effects, counter.inspect));
    expect(await reopened.recover()).toEqual([]);
    expect(counter.roots).toBe(0);
    expect(reopened.stats()).toMatchObject({ liveRuns: 0, wakeTimers: 0 });
    expect((await reopened.list({ status: 'waiting_human', limit: 200 })).runs).toHaveLength(100);

    const one = waiting[42]!;
    await reopened.approve(one.id, one.pendingApprovalId!, { by: 'bob' });
    expect(await reopened.wait(one.id)).toMatchObject({ status: 'succeeded' });
    expect(counter.roots).toBe(1);
  });

  it('are woken at their deadline by the one scheduler, also after a restart', async () => {
    const { db, effects } = tempFiles();
    const { runtime, waiting } = await startWaiting(setup(db, effects), 20, 1_500);
    await expect.poll(() => runtime.stats().liveRuns).toBe(0);
    const reopened = await restart(runtime, setup(db, effects));
    expect(reopened.stats().wakeTimers).toBe(1);
    for (const run of waiting) {
      await expect.poll(async () => (await reopened.get(run.id)).status, { timeout: scaled(30_000) }).toBe('failed');
      expect((await reopened.get(run.id)).stopReason).toBe('timeout');
    }
    expect(readEffects(effects)).toEqual([]);
    await expect.poll(() => reopened.stats().liveRuns).toBe(0);
  });
});

describe('runs in flight on open', () => {
  it('are resumed 50 at once, then 50 a turn, and all finish', async () => {
    const { db, effects } = tempFiles();
    const held = {
      ...setup(db, effects),
      planner: createScriptedPlanner([{ type: 'final', answer: 'done' }]),
      // Every run is held at its planner until the runtime closes: in flight when it does.
      hooks: {
        beforeActor: ({ signal }: { signal: AbortSignal }) =>
          new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('closed')))),
      },
    };
    const first = openRuntime(held);
    await Promise.all(Array.from({ length: 120 }, (_, i) => first.start({ input: `r${i}`, sessionId: `s${i}` })));
    await expect.poll(async () => (await first.list({ status: 'planning', limit: 200 })).runs.length).toBe(120);
    await first.close();

    const counter = rootCounter();
    const runtime = openRuntime({
      ...setup(db, effects, counter.inspect),
      planner: createScriptedPlanner([{ type: 'final', answer: 'done' }]),
    });
    // Ready after the first batch only.
    await runtime.ready;
    expect(counter.roots).toBe(50);
    await expect.poll(async () => (await runtime.list({ status: 'succeeded', limit: 200 })).runs.length).toBe(120);
    expect(counter.roots).toBe(120);
  });
});

describe('lease heartbeat', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('renews only the runs this runtime drives, a batch per statement, and reports the ones it lost', async () => {
    // Only the interval is faked: the batches still take real turns of the event loop.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const calls: string[][] = [];
    // The store says two runs of the last batch are held by another runtime now.
    const taken = new Set(['run_1100', 'run_1199']);
    const store = {
      renewLeases: async (_owner: string, _leaseMs: number, ids: readonly string[]) => {
        calls.push([...ids]);
        return ids.filter((id) => !taken.has(id)).map((id) => ({ id, cancel_requested: null }));
      },
    };
    const lost: string[] = [];
    const driving = Array.from({ length: 1_200 }, (_, i) => `run_${i}`);
    const stop = startHeartbeat(
      store as unknown as Store,
      'me',
      30_000,
      () => driving,
      (ids) => lost.push(...ids),
    );
    await vi.advanceTimersByTimeAsync(10_000);
    await expect.poll(() => calls.length).toBe(3);
    stop();
    expect(calls.map((ids) => ids.length)).toEqual([500, 500, 200]);
    expect(calls.flat()).toEqual(driving);
    expect(lost).toEqual(['run_1100', 'run_1199']);
  });
});
