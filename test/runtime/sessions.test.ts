/** Sessions and starts: one active run per session, idempotency keys, listing and paging; on both dialects. */
import { describe, expect, it } from 'vitest';
import { BatonError, createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { scaled } from '../helpers/limits.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { openRuntime } from '../helpers/runtime.js';
import { createWorld, readEffects } from '../helpers/world.js';

/**
 * The lease of the two runtimes on one database. Short, so that a cancel asked of the other runtime
 * is carried out soon (it learns of it at its next renewal, every third of a lease); but a lease
 * lapses when its holder's event loop is starved that long, and the other runtime may then take
 * the run over, so it is scaled like the other limits (at 600 ms it lapsed under load).
 */
const LEASE_MS = scaled(3_000);

function waitingSetup(database: string, effects: string): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'v' } }] },
      { type: 'final', answer: 'ok' },
    ]),
    tools: [createWorld(effects, { risk: 'high' }).unsafe],
  };
}

describe.each(ALL_DIALECTS)('sessions on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('refuses a second active run on a session with session.busy', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(waitingSetup(database, effects));
    const first = await runtime.start({ input: 'a', sessionId: 's1' });
    await expect(runtime.start({ input: 'b', sessionId: 's1' })).rejects.toMatchObject({
      code: 'session.busy',
      failure: { details: { active_run_id: first.id } },
    });
    expect((await runtime.list({ sessionId: 's1' })).runs).toHaveLength(1);
    // Another session is not affected.
    await expect(runtime.start({ input: 'c', sessionId: 's2' })).resolves.toMatchObject({ status: 'pending' });
  });

  it('refuses it from a second runtime on the same database too, which never takes over a run in flight', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    // `one` holds the planner of every run after the first until it closes: in flight, driven there.
    let held = 0;
    const one = openRuntime({
      ...waitingSetup(database, effects),
      leaseMs: LEASE_MS,
      hooks: {
        beforeActor: ({ actor, signal }) =>
          actor === 'planner' && held++ > 0
            ? new Promise<void>((_resolve, reject) =>
                signal.addEventListener('abort', () => reject(new Error('closed'))),
              )
            : undefined,
      },
    });
    const two = openRuntime({ ...waitingSetup(database, effects), leaseMs: LEASE_MS });
    const first = await one.start({ input: 'a', sessionId: 's1' });
    expect((await one.wait(first.id)).status).toBe('waiting_human');
    await expect(two.start({ input: 'b', sessionId: 's1' })).rejects.toMatchObject({ code: 'session.busy' });
    const busy = await one.start({ input: 'c', sessionId: 's2' });
    await expect.poll(async () => (await one.get(busy.id)).status).toBe('planning');
    // The second runtime does not take over a run the first one drives: sending it an event is
    // refused, and a cancel is asked of the first, which carries it out.
    expect(await two.recover()).toEqual([]);
    const refused = two.send(busy.id, { type: 'timeout' });
    await expect(refused).rejects.toMatchObject({ code: 'run.version_conflict' });
    // The public API throws one error class.
    await expect(refused).rejects.toBeInstanceOf(BatonError);
    expect(await two.cancel(busy.id, { reason: 'not now' })).toMatchObject({
      status: 'failed',
      stopReason: 'cancelled',
    });
    expect(two.stats().liveRuns).toBe(0);
    // A run waiting for a human is driven by no one: a decision from either runtime applies, once.
    await two.approve(first.id, (await one.get(first.id)).pendingApprovalId!, { by: 'x' });
    expect((await two.wait(first.id)).status).toBe('succeeded');
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('accepts a new run on the session once the previous one is terminal', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(waitingSetup(database, effects));
    const first = await runtime.wait((await runtime.start({ input: 'a', sessionId: 's1' })).id);
    await runtime.approve(first.id, first.pendingApprovalId!, { by: 'x' });
    expect((await runtime.wait(first.id)).status).toBe('succeeded');
    const second = await runtime.start({ input: 'b', sessionId: 's1' });
    expect(second.sessionId).toBe('s1');
  });

  it('returns the same run for the same idempotency key', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = waitingSetup(database, effects);
    const runtime = openRuntime(options);
    const a = await runtime.start({ input: 'a', options: { idempotencyKey: 'k1' } });
    const b = await runtime.start({ input: 'a', options: { idempotencyKey: 'k1' } });
    expect(b.id).toBe(a.id);
    const other = openRuntime(options);
    expect((await other.start({ input: 'a', options: { idempotencyKey: 'k1' } })).id).toBe(a.id);
    const [x, y] = await Promise.all([
      runtime.start({ input: 'z', options: { idempotencyKey: 'k2' } }),
      runtime.start({ input: 'z', options: { idempotencyKey: 'k2' } }),
    ]);
    expect(x.id).toBe(y.id);
    expect((await runtime.list()).runs).toHaveLength(2);
    await runtime.wait(a.id);
    expect(readEffects(effects)).toEqual([]);
  });

  it('lists runs newest first, filtered and paged', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(waitingSetup(database, effects));
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await runtime.start({ input: `r${i}` })).id);
    for (const id of ids) await runtime.wait(id);
    const page1 = await runtime.list({ limit: 3 });
    expect(page1.runs.map((r) => r.id)).toEqual(ids.slice().reverse().slice(0, 3));
    const page2 = await runtime.list({ limit: 3, cursor: page1.nextCursor! });
    expect(page2.runs.map((r) => r.id)).toEqual(ids.slice().reverse().slice(3));
    expect((await runtime.list({ status: 'waiting_human' })).runs).toHaveLength(5);
    expect((await runtime.list({ status: 'succeeded' })).runs).toHaveLength(0);
  });
});
