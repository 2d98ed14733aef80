/**
 * The runtime's behaviour, the same on a SQLite file and on PostgreSQL: runs, tools and their
 * ledger, approvals (single use, racing, surviving a restart), sessions and idempotency keys,
 * cancelling, resuming runs in flight after a close, deadlines, refused events, and two
 * runtimes sharing one database.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

/** A planner that reads, then calls the unsafe tool (high risk: approval), then answers. */
function setup(database: string, effects: string, risk: 'low' | 'high' = 'high'): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) => {
      if (request.stepIndex === 0) {
        return {
          type: 'tool_calls',
          calls: [
            { tool: 'world.read', args: { value: 'look' } },
            { tool: 'world.unsafe', args: { value: `send ${request.input}` } },
          ],
        };
      }
      return { type: 'final', answer: `done: ${request.input}` };
    }),
    tools: [createWorld(effects).read, createWorld(effects, { risk }).unsafe],
  };
}

/** The seqs of a run's events are 1..n. */
async function expectContiguous(runtime: ReturnType<typeof openRuntime>, runId: string) {
  const events = await eventsOf(runtime, runId);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  return events;
}

describe.each(ALL_DIALECTS)('the runtime on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('runs to an answer through its tools, with the ledger, steps, trace, checkpoint and list', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects, 'low'));
    await runtime.ready;
    const run = await runtime.start({ input: 'a', sessionId: 'one' });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'done: a', sessionId: 'one' });
    expect((await runtime.toolCalls(run.id)).map((c) => `${c.tool}:${c.status}`)).toEqual([
      'world.read:succeeded',
      'world.unsafe:succeeded',
    ]);
    expect(await runtime.steps(run.id)).toHaveLength(2);
    expect((await runtime.trace(run.id)).spans.length).toBeGreaterThan(0);
    expect((await runtime.checkpoint(run.id)).version).toBeGreaterThan(1);
    const events = await expectContiguous(runtime, run.id);
    expect(events.at(-1)).toMatchObject({ type: 'state', data: { to: 'succeeded' } });
    for (const input of ['b', 'c', 'd']) await runtime.wait((await runtime.start({ input })).id);
    const page = await runtime.list({ limit: 3 });
    expect(page.runs).toHaveLength(3);
    const rest = await runtime.list({ limit: 3, cursor: page.nextCursor! });
    expect(rest.runs.map((r) => r.input)).toEqual(['a']);
    expect((await runtime.list({ sessionId: 'one' })).runs.map((r) => r.id)).toEqual([run.id]);
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(4);
  });

  it('keeps a large output as an artifact the run answers for, byte for byte', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const bytes = defineTool({
      name: 'blob.read',
      description: 'Reads a large blob',
      input: z.object({ n: z.number() }),
      effect: 'read',
      risk: 'low',
      execute: ({ n }) => ({
        n,
        text: Array.from({ length: 3_000 }, (_, i) => `row ${i} \u00e9\u0000 ${n}`).join('\n'),
      }),
    });
    const runtime = openRuntime({
      ...setup(database, effects, 'low'),
      planner: createScriptedPlanner((r) =>
        r.stepIndex === 0
          ? { type: 'tool_calls', calls: [{ tool: 'blob.read', args: { n: 7 } }] }
          : { type: 'final', answer: 'ok' },
      ),
      tools: [bytes],
    });
    const run = await runtime.wait((await runtime.start({ input: 'x', sessionId: 'a' })).id);
    expect(run.status).toBe('succeeded');
    const [ref] = await runtime.artifacts(run.id);
    const artifact = await runtime.artifact(run.id, ref!.sha256);
    expect(createHash('sha256').update(artifact.content).digest('hex')).toBe(ref!.sha256);
    expect(artifact.content.length).toBe(ref!.size);
    expect(artifact.content.toString()).toContain('row 2999');
    const other = await runtime.wait((await runtime.start({ input: 'y', sessionId: 'b' })).id);
    await expect(runtime.artifact(other.id, ref!.sha256)).resolves.toMatchObject({ sha256: ref!.sha256 });
    const plain = openRuntime({ ...setup(database, effects, 'low'), recover: false });
    const none = await plain.wait((await plain.start({ input: 'z', sessionId: 'c' })).id);
    await expect(plain.artifact(none.id, ref!.sha256)).rejects.toMatchObject({ code: 'artifact.not_found' });
  });

  it('waits for a human across a restart, runs the approved call once, and refuses a second decision', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = setup(database, effects);
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'approval' });
    expect(readEffects(effects)).toEqual([]);
    runtime = await restart(runtime, options);
    const approved = await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice', reason: 'fine' });
    expect(approved).toMatchObject({ status: 'approved', decidedBy: 'alice' });
    await expect(runtime.approve(run.id, run.pendingApprovalId!, { by: 'bob' })).rejects.toMatchObject({
      code: 'approval.already_decided',
    });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects).map((e) => e.tool)).toEqual(['world.read', 'world.unsafe']);
    await expectContiguous(runtime, run.id);
  });

  it('lets one of five racing approvals win', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd', 'e'].map((by) => runtime.approve(run.id, run.pendingApprovalId!, { by })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results
        .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        .every((r) => (r.reason as { code: string }).code === 'approval.already_decided'),
    ).toBe(true);
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(1);
  });

  it('ends a run a reviewer rejects with terminate, and tells the model of a plain rejection', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const ended = await runtime.wait((await runtime.start({ input: 'x', sessionId: 's1' })).id);
    await runtime.reject(ended.id, ended.pendingApprovalId!, { by: 'rita', terminate: true });
    expect(await runtime.wait(ended.id)).toMatchObject({ status: 'failed', stopReason: 'rejected' });
    const told = await runtime.wait((await runtime.start({ input: 'y', sessionId: 's2' })).id);
    await runtime.reject(told.id, told.pendingApprovalId!, { by: 'rita', reason: 'no' });
    expect(await runtime.wait(told.id)).toMatchObject({ status: 'succeeded', answer: 'done: y' });
    expect((await runtime.toolCalls(told.id)).find((c) => c.tool === 'world.unsafe')?.status).toBe('rejected');
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toEqual([]);
  });

  it('keeps one active run per session and one run per idempotency key', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const first = await runtime.start({ input: 'x', sessionId: 'busy', options: { idempotencyKey: 'k1' } });
    await expect(runtime.start({ input: 'y', sessionId: 'busy' })).rejects.toMatchObject({ code: 'session.busy' });
    const again = await runtime.start({ input: 'x', sessionId: 'busy', options: { idempotencyKey: 'k1' } });
    expect(again.id).toBe(first.id);
    await expect(
      runtime.start({ input: 'other', sessionId: 'busy', options: { idempotencyKey: 'k1' } }),
    ).rejects.toMatchObject({ code: 'idempotency.mismatch' });
    // Concurrent starts on one fresh session: one run, the rest busy.
    const racing = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => runtime.start({ input: `r${i}`, sessionId: 'race' })),
    );
    expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await runtime.list({ sessionId: 'race' })).runs).toHaveLength(1);
  });

  it('cancels a waiting run, and refuses an event its state does not take', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    await expect(runtime.send(run.id, { type: 'start' })).rejects.toMatchObject({
      code: 'run.invalid_transition',
    });
    const cancelled = await runtime.cancel(run.id, { reason: 'changed my mind' });
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    await expect(runtime.approve(run.id, run.pendingApprovalId!, { by: 'a' })).rejects.toMatchObject({
      code: expect.stringMatching(/approval\.already_decided|run\.invalid_transition/),
    });
    expect(readEffects(effects)).toEqual([]);
  });

  it('resumes runs that were in flight when the runtime closed', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const held: RuntimeOptions = {
      ...setup(database, effects, 'low'),
      // Every run is held at its first actor until the runtime closes.
      hooks: {
        beforeActor: ({ signal }) =>
          new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('closed')))),
      },
    };
    const first = openRuntime(held);
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => first.start({ input: `r${i}` })));
    await expect.poll(async () => (await first.list({ status: 'planning' })).runs.length).toBe(8);
    await first.close();
    const second = openRuntime(setup(database, effects, 'low'));
    await second.ready;
    for (const run of runs) expect((await second.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(8);
    for (const run of runs) await expectContiguous(second, run.id);
  });

  it('fires the deadline of a run waiting for approval, also after a restart', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = setup(database, effects);
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget: { timeoutMs: 1_500 } } })).id);
    expect(run.status).toBe('waiting_human');
    runtime = await restart(runtime, options);
    await expect.poll(async () => (await runtime.get(run.id)).status, { timeout: scaled(30_000) }).toBe('failed');
    expect((await runtime.get(run.id)).stopReason).toBe('timeout');
    expect(readEffects(effects)).toEqual([]);
  });

  it('cancels a run another runtime drives: the one that drives it carries the cancel out', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    let aborted = 0;
    const a = openRuntime({
      ...setup(database, effects, 'low'),
      leaseMs: 900,
      // Every planner call waits until the run is cancelled.
      hooks: {
        beforeActor: ({ signal }) =>
          new Promise<void>((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              aborted += 1;
              reject(new Error('cancelled'));
            }),
          ),
      },
    });
    const b = openRuntime({ ...setup(database, effects, 'low'), recover: false, leaseMs: 900 });
    const run = await a.start({ input: 'x' });
    await expect.poll(async () => (await b.get(run.id)).status).toBe('planning');
    const cancelled = await b.cancel(run.id, { reason: 'from b' });
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(aborted).toBe(1);
    expect(b.stats().liveRuns).toBe(0);
    const events = await expectContiguous(b, run.id);
    expect(events.at(-1)).toMatchObject({ type: 'state', data: { to: 'failed', stop_reason: 'cancelled' } });
    expect(readEffects(effects)).toEqual([]);
  });

  it('lets a second runtime on the same database follow and decide a run the first one drives', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const a = openRuntime(setup(database, effects));
    const b = openRuntime({ ...setup(database, effects), recover: false });
    const run = await a.wait((await a.start({ input: 'x' })).id);
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of b.events(run.id)) seen.push(`${event.seq}:${event.type}`);
    })();
    // b decides: the run is not driven anywhere while it waits; b loads it and drives it to the end.
    await expect.poll(() => a.stats().liveRuns).toBe(0);
    await b.approve(run.id, run.pendingApprovalId!, { by: 'bob' });
    expect((await b.wait(run.id)).status).toBe('succeeded');
    await following;
    const stored = await expectContiguous(a, run.id);
    expect(seen).toEqual(stored.map((e) => `${e.seq}:${e.type}`));
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(1);
  });
});
