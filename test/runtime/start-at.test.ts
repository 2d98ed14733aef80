/**
 * `start({ startAt })` on both dialects: the run is stored at once, `queued` until its instant,
 * then started by a runtime that claims runs (never before its instant, once); it can be
 * cancelled while it waits, it survives a restart before its instant, and over two runtimes on
 * one database it starts once. A bad instant, or a session with it, is refused.
 */
import { describe, expect, it } from 'vitest';
import type { BatonError } from '../../src/index.js';
import { createScriptedPlanner, type Runtime } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';

const answers = createScriptedPlanner(() => ({ type: 'final', answer: 'later' }));

/** When the run left `queued`: its first `state` event's time. */
async function startedAt(runtime: Runtime, runId: string): Promise<number> {
  const state = (await eventsOf(runtime, runId)).find((e) => e.type === 'state');
  return state!.createdAt;
}

describe.each(ALL_DIALECTS)('start({ startAt }) (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('stores the run queued and starts it at its instant, once, across two runtimes', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const a = openRuntime({ database, planner: answers, tools: [] });
    const b = openRuntime({ database, planner: answers, tools: [] });
    await Promise.all([a.ready, b.ready]);
    const at = Date.now() + 1_000;
    const run = await a.start({ input: 'report', startAt: new Date(at).toISOString() });
    expect(run).toMatchObject({ status: 'queued', startAt: at });
    expect((await b.get(run.id)).startAt).toBe(at);
    expect((await b.list({ status: 'queued' })).runs.map((r) => r.id)).toEqual([run.id]);
    const created = (await eventsOf(a, run.id)).find((e) => e.type === 'run.created')!;
    expect(created.data.start_at).toBe(at);
    expect(await a.wait(run.id)).toMatchObject({ status: 'succeeded', startAt: null });
    expect(await startedAt(a, run.id)).toBeGreaterThanOrEqual(at);
    // Started once: one `start` of the machine, one planner answer.
    const states = (await eventsOf(a, run.id))
      .filter((e) => e.type === 'state')
      .map((e) => `${e.data.from}>${e.data.to}`);
    expect(states.filter((s) => s.endsWith('>planning')).length).toBe(1);
    // An instant already past starts it now.
    const now = await a.start({ input: 'now', startAt: Date.now() - 1_000 });
    expect(now.status).not.toBe('queued');
    await a.wait(now.id);
  });

  it('is cancelled while it waits, and survives a restart before its instant', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const first = openRuntime({ database, planner: answers, tools: [] });
    const far = await first.start({ input: 'far', startAt: Date.now() + 3_600_000 });
    const cancelled = await first.cancel(far.id, { reason: 'not needed' });
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    const at = Date.now() + 800;
    const soon = await first.start({ input: 'soon', startAt: at });
    await first.close();
    await waitUntil(() => Date.now() >= at + 200, 'its instant to pass while nothing runs');
    const again = openRuntime({ database, planner: answers, tools: [] });
    expect((await again.wait(soon.id)).status).toBe('succeeded');
    expect(await startedAt(again, soon.id)).toBeGreaterThanOrEqual(at);
    expect((await again.get(far.id)).status).toBe('failed');
  });

  it('refuses an instant that is not one, and a session with it', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({ database, planner: answers, tools: [] });
    for (const [request, message] of [
      [{ input: 'x', startAt: 'tomorrow' }, 'startAt must be an instant'],
      [{ input: 'x', startAt: Date.now() + 1_000, sessionId: 's' }, 'runs in a session of its own'],
      [{ input: 'x', startAt: Date.now() + 1_000, onBusy: 'enqueue' as const }, 'runs in a session of its own'],
    ] as const) {
      const failure = ((await runtime.start(request).catch((e: unknown) => e)) as BatonError).failure;
      expect(failure.code).toBe('input.invalid');
      expect(failure.message).toContain(message);
    }
    expect((await runtime.list({})).runs).toEqual([]);
  });
});
