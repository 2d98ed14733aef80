/**
 * A busy session's queue (`start({ onBusy })`), on both dialects: `reject` stays the default; a
 * run that is enqueued waits `queued`, is listed and cancellable so, survives a restart, and
 * runs once the runs before it have ended, first in first out; one that interrupts cancels the
 * active run and goes before the runs queued earlier; the session never has two active runs.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type Run, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { killThenResume } from '../helpers/kill-resume.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { createWorld, readEffects } from '../helpers/world.js';

const QUEUE_CHILD = fileURLToPath(new URL('../helpers/queue-child.ts', import.meta.url));

/** A run whose input starts with `hold` waits for approval of an unsafe call; any other answers at once. */
function setup(database: string, effects: string): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) => {
      if (request.stepIndex === 0 && request.input.startsWith('hold')) {
        return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: request.input } }] };
      }
      return { type: 'final', answer: `done: ${request.input}` };
    }),
    tools: [createWorld(effects, { risk: 'high' }).unsafe],
  };
}

/** When a run's machine first moved, and when it ended (from its own log). */
async function spanOf(runtime: Runtime, run: Run): Promise<{ started: number; ended: number }> {
  const states = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'state');
  return { started: states[0]!.createdAt, ended: states.at(-1)!.createdAt };
}

describe.each(ALL_DIALECTS)('session queues on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('refuses a run of a busy session by default, and with onBusy reject', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const active = await runtime.wait((await runtime.start({ input: 'hold a', sessionId: 's' })).id);
    expect(active.status).toBe('waiting_human');
    for (const onBusy of [undefined, 'reject'] as const) {
      await expect(runtime.start({ input: 'b', sessionId: 's', ...(onBusy ? { onBusy } : {}) })).rejects.toMatchObject({
        code: 'session.busy',
        failure: { details: { active_run_id: active.id } },
      });
    }
    expect((await runtime.list({ sessionId: 's' })).runs).toHaveLength(1);
  });

  it('keeps enqueued runs queued across a restart, then runs them one at a time, first in first out', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = setup(database, effects);
    let runtime = openRuntime(options);
    const a = await runtime.wait((await runtime.start({ input: 'hold a', sessionId: 's' })).id);
    const b = await runtime.start({ input: 'b', sessionId: 's', onBusy: 'enqueue' });
    const c = await runtime.start({ input: 'c', sessionId: 's', onBusy: 'enqueue' });
    expect([b.status, c.status]).toEqual(['queued', 'queued']);
    expect((await runtime.list({ status: 'queued' })).runs.map((run) => run.id)).toEqual([c.id, b.id]);
    const created = (await eventsOf(runtime, b.id))[0]!;
    expect(created).toMatchObject({ type: 'run.created', data: { queued: { on_busy: 'enqueue', behind: a.id } } });

    runtime = await restart(runtime, options);
    expect((await runtime.get(b.id)).status).toBe('queued');
    expect((await runtime.get(c.id)).status).toBe('queued');
    await runtime.approve(a.id, a.pendingApprovalId!, { by: 'alice' });
    const [doneA, doneB, doneC] = await Promise.all([a, b, c].map((run) => runtime.wait(run.id)));
    expect([doneA!.status, doneB!.status, doneC!.status]).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(doneC!.answer).toBe('done: c');
    // One at a time, in order: each started only once the one before it had ended.
    const spans = await Promise.all([doneA!, doneB!, doneC!].map((run) => spanOf(runtime, run)));
    expect(spans[1]!.started).toBeGreaterThanOrEqual(spans[0]!.ended);
    expect(spans[2]!.started).toBeGreaterThanOrEqual(spans[1]!.ended);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('interrupts: cancels the active run, then runs before the runs queued earlier', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const a = await runtime.wait((await runtime.start({ input: 'hold a', sessionId: 's' })).id);
    const b = await runtime.start({ input: 'b', sessionId: 's', onBusy: 'enqueue' });
    const c = await runtime.start({
      input: 'c',
      sessionId: 's',
      onBusy: 'interrupt',
      interrupt: { reason: 'the user changed their mind' },
    });
    const cancelled = await runtime.get(a.id);
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(cancelled.failure?.message).toContain('the user changed their mind');
    const [doneB, doneC] = await Promise.all([runtime.wait(b.id), runtime.wait(c.id)]);
    expect([doneB.status, doneC.status]).toEqual(['succeeded', 'succeeded']);
    const [spanB, spanC] = await Promise.all([spanOf(runtime, doneB), spanOf(runtime, doneC)]);
    expect(spanB.started).toBeGreaterThanOrEqual(spanC.ended);
    expect(readEffects(effects)).toEqual([]);
  });

  it('cancels a queued run without ever starting it; the queue goes on without it', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const a = await runtime.wait((await runtime.start({ input: 'hold a', sessionId: 's' })).id);
    const b = await runtime.start({ input: 'b', sessionId: 's', onBusy: 'enqueue' });
    const c = await runtime.start({ input: 'c', sessionId: 's', onBusy: 'enqueue' });
    const cancelled = await runtime.cancel(b.id, { reason: 'not needed' });
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled', usage: { steps: 0, llmCalls: 0 } });
    expect((await eventsOf(runtime, b.id)).map((e) => [e.type, e.data.to ?? null])).toEqual([
      ['run.created', null],
      ['state', 'failed'],
    ]);
    await runtime.approve(a.id, a.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(c.id)).status).toBe('succeeded');
    expect(await runtime.get(b.id)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    // A cancel of a run that has ended changes nothing.
    await expect(runtime.cancel(b.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
  });

  it('follows a queued run through its turn: events() neither ends while it waits nor misses what it does', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const a = await runtime.wait((await runtime.start({ input: 'hold a', sessionId: 's' })).id);
    const b = await runtime.start({ input: 'b', sessionId: 's', onBusy: 'enqueue' });
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of runtime.events(b.id))
        seen.push(`${event.type}${event.data.to ? `>${event.data.to}` : ''}`);
    })();
    // The stream stays open while the run is queued: what it does once it runs comes through.
    await runtime.approve(a.id, a.pendingApprovalId!, { by: 'alice' });
    await following;
    expect(seen[0]).toBe('run.created');
    expect(seen.at(-1)).toBe('state>succeeded');
    // And a follower that is told to stop while the run is queued stops.
    const c = await runtime.start({ input: 'hold c', sessionId: 's2' });
    await runtime.wait(c.id);
    const d = await runtime.start({ input: 'd', sessionId: 's2', onBusy: 'enqueue' });
    const abort = new AbortController();
    const stopped = (async () => {
      const events = [];
      for await (const event of runtime.events(d.id, { signal: abort.signal })) events.push(event);
      return events.length;
    })();
    abort.abort();
    expect(await stopped).toBeLessThanOrEqual(1);
  });

  it('starts an enqueued run at once when its session is free', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const run = await runtime.start({ input: 'x', sessionId: 's', onBusy: 'enqueue' });
    expect(run.status).not.toBe('queued');
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
  });

  it('interrupts across a SIGKILL right after the interrupting run is committed: the active run is cancelled, the new one runs', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const ended = await killThenResume<{ a: unknown; b: unknown }>(
      QUEUE_CHILD,
      { db: database, effects },
      'run.created=kill@2',
    );
    expect(ended).toEqual({
      a: { status: 'failed', stop_reason: 'cancelled' },
      b: { status: 'succeeded', answer: 'done: b' },
    });
    expect(readEffects(effects)).toEqual([]);
  });

  it('refuses an unknown onBusy and interrupt terms without onBusy interrupt, changing nothing', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    await expect(
      runtime.start({ input: 'x', sessionId: 's', onBusy: 'later' as unknown as 'enqueue' }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(
      runtime.start({ input: 'x', sessionId: 's', onBusy: 'enqueue', interrupt: { compensate: true } }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    expect((await runtime.list({})).runs).toEqual([]);
  });
});
