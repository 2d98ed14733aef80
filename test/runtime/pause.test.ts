/**
 * An operator's pause (`pause` / `resume`), on both dialects: the run stops before its next step
 * — a call in flight finishes and is recorded first — and waits with reason `paused`, holding no
 * memory and surviving a restart, until it is resumed where it stopped; no call runs twice. A
 * pause asked while the planner is answering stops the run before the step's calls; one asked of
 * a run waiting on a person is reached once that wait is over. A runtime that does not drive the
 * run (an API process) asks, and the one that drives it carries it out. Bad asks change nothing.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type PlannerDecision, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { createWorld, readEffects } from '../helpers/world.js';

/** A tool held in flight until the test lets it go. */
function heldTool() {
  let release: () => void = () => undefined;
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (started = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool({
    name: 'slow',
    description: 'Takes its time',
    input: z.object({ n: z.number() }),
    effect: 'read',
    risk: 'low',
    execute: async ({ n }) => {
      started();
      await gate;
      return { slow: n };
    },
  });
  return { tool, running, release: () => release() };
}

/** Step 0 calls `slow` (held), step 1 the unsafe world tool, step 2 answers; planner calls are counted. */
function setup(database: string, effects: string, extra: Partial<RuntimeOptions> = {}) {
  const held = heldTool();
  const asked: number[] = [];
  let hold: Promise<void> | null = null;
  const plan: Record<number, PlannerDecision> = {
    0: { type: 'tool_calls', calls: [{ tool: 'slow', args: { n: 1 } }] },
    1: { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'once' } }] },
    2: { type: 'final', answer: 'done' },
  };
  const options: RuntimeOptions = {
    database,
    planner: {
      async next(request) {
        asked.push(request.stepIndex);
        if (hold && request.stepIndex === 1) await hold;
        return { decision: plan[request.stepIndex] ?? plan[2]!, usage: { inputTokens: 1, outputTokens: 1 } };
      },
    },
    tools: [held.tool, createWorld(effects).unsafe],
    ...extra,
  };
  return {
    options,
    held,
    asked,
    holdPlanner: (until: Promise<void>) => {
      hold = until;
    },
  };
}

async function pauseWaitOf(runtime: Runtime, runId: string) {
  const run = await runtime.get(runId);
  return (await runtime.approvals(runId)).find((a) => a.id === run.pendingApprovalId);
}

describe.each(ALL_DIALECTS)('operator pause on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('lets the call in flight finish, stops before the next step, and goes on where it stopped once resumed', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const { options, held, asked } = setup(database, effects);
    const runtime = openRuntime(options);
    const run = await runtime.start({ input: 'go' });
    await held.running;
    const asking = await runtime.pause(run.id, { reason: 'checking the bill', by: 'ops' });
    expect(asking).toMatchObject({ pauseRequested: { reason: 'checking the bill', by: 'ops' } });
    // Asking again before it is reached changes nothing.
    expect((await runtime.pause(run.id, { reason: 'again' })).pauseRequested?.reason).toBe('checking the bill');
    held.release();
    const paused = await runtime.wait(run.id);
    expect(paused).toMatchObject({ status: 'waiting_human', waitReason: 'paused', pauseRequested: null });
    // The call in flight finished and is recorded; the next step was not planned.
    expect((await runtime.toolCalls(run.id)).map((c) => [c.tool, c.status])).toEqual([['slow', 'succeeded']]);
    expect(asked).toEqual([0]);
    const wait = await pauseWaitOf(runtime, run.id);
    expect(wait).toMatchObject({
      kind: 'pause',
      status: 'pending',
      role: 'submit',
      expiresAt: null,
      request: { kind: 'pause', reason: 'checking the bill', by: 'ops', resume: 'planning', stepIndex: 1 },
    });
    // The pause is not a call to approve: only resume (or a cancel) ends it.
    await expect(runtime.approve(run.id, wait!.id, { by: 'alice' })).rejects.toMatchObject({
      code: 'approval.wrong_decision',
    });
    await expect(runtime.pause(run.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
    // A paused run holds no memory.
    await expect.poll(() => runtime.stats().liveRuns).toBe(0);

    const resumed = await runtime.resume(run.id, { by: 'ops', reason: 'bill is fine' });
    expect(resumed.status).not.toBe('waiting_human');
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'done' });
    expect(asked).toEqual([0, 1, 2]);
    expect(readEffects(effects)).toHaveLength(1);
    expect(await runtime.approvals(run.id)).toEqual([
      expect.objectContaining({ kind: 'pause', status: 'approved', resolution: 'resume', decidedBy: 'ops' }),
    ]);
    const log = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'approval_request' || e.type === 'state');
    expect(log.map((e) => e.data.to ?? e.data.reason)).toEqual([
      'planning',
      'executing',
      'waiting_human',
      'paused',
      'planning',
      'executing',
      'planning',
      'executing',
      'succeeded',
    ]);
    await expect(runtime.resume(run.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
    await expect(runtime.pause(run.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
  });

  it('stays paused across a restart, and resumes from the file', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const { options, held } = setup(database, effects);
    let runtime = openRuntime(options);
    const run = await runtime.start({ input: 'go' });
    await held.running;
    await runtime.pause(run.id, { by: 'ops' });
    held.release();
    expect((await runtime.wait(run.id)).waitReason).toBe('paused');

    const again = setup(database, effects);
    again.held.release();
    runtime = await restart(runtime, again.options);
    expect(await runtime.get(run.id)).toMatchObject({ status: 'waiting_human', waitReason: 'paused' });
    expect(runtime.stats().liveRuns).toBe(0);
    await runtime.resume(run.id);
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
    expect(again.asked).toEqual([1, 2]);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('asked while the planner answers, stops before the step it planned runs its calls', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const { options, held, asked, holdPlanner } = setup(database, effects);
    let answer: () => void = () => undefined;
    holdPlanner(new Promise<void>((resolve) => (answer = resolve)));
    const runtime = openRuntime(options);
    const run = await runtime.start({ input: 'go' });
    held.release();
    await expect.poll(() => asked).toEqual([0, 1]);
    expect((await runtime.get(run.id)).status).toBe('planning');
    await runtime.pause(run.id, { reason: 'before it writes' });
    answer();
    const paused = await runtime.wait(run.id);
    expect(paused).toMatchObject({ waitReason: 'paused', usage: { llmCalls: 2 } });
    expect((await pauseWaitOf(runtime, run.id))?.request).toMatchObject({ resume: 'executing', stepIndex: 1 });
    // The step is planned, and none of its calls ran.
    expect((await runtime.toolCalls(run.id)).map((c) => c.tool)).toEqual(['slow']);
    expect(readEffects(effects)).toEqual([]);
    await runtime.resume(run.id);
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
    // Resumed, the planned step ran without asking the planner again.
    expect(asked).toEqual([0, 1, 2]);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('asked of a run waiting on a person, is reached once that wait is over and the step has run', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const world = createWorld(effects, { risk: 'high' });
    let calls = 0;
    const runtime = openRuntime({
      database,
      planner: {
        async next(request) {
          calls += 1;
          const decision: PlannerDecision =
            request.stepIndex === 0
              ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'approved' } }] }
              : { type: 'final', answer: 'done' };
          return { decision, usage: { inputTokens: 1, outputTokens: 1 } };
        },
      },
      tools: [world.unsafe],
    });
    const run = await runtime.wait((await runtime.start({ input: 'go' })).id);
    expect(run.waitReason).toBe('approval');
    expect((await runtime.pause(run.id, { by: 'ops' })).pauseRequested).toEqual({ reason: null, by: 'ops' });
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    const paused = await runtime.wait(run.id);
    expect(paused).toMatchObject({ status: 'waiting_human', waitReason: 'paused' });
    expect(readEffects(effects)).toHaveLength(1);
    expect(calls).toBe(1);
    // A cancel ends a paused run like any wait.
    expect(await runtime.cancel(run.id, { reason: 'no more' })).toMatchObject({
      status: 'failed',
      stopReason: 'cancelled',
    });
    expect(calls).toBe(1);
  });

  it('is carried out by the runtime that drives the run when another runtime asks', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const { options, held, asked } = setup(database, effects, { leaseMs: 600, claimEveryMs: 100 });
    const worker = openRuntime(options);
    const run = await worker.start({ input: 'go' });
    await held.running;
    // Another process: on PostgreSQL an API process that drives nothing; on SQLite a command
    // line's runtime, which drives only what it acts on (a decision, here the resume).
    const second = setup(database, effects);
    second.held.release();
    const other = openRuntime({
      ...second.options,
      ...(dialect === 'postgres' ? { drive: false } : { claim: false, recover: false }),
    });
    const asking = await other.pause(run.id, { reason: 'from elsewhere', by: 'ops' });
    expect(asking.pauseRequested).toEqual({ reason: 'from elsewhere', by: 'ops' });
    // The worker takes the ask (notified on PostgreSQL, at its next lease renewal on SQLite).
    await expect
      .poll(async () => (await eventsOf(other, run.id)).find((e) => e.type === 'pause')?.data, { timeout: 20_000 })
      .toEqual({ reason: 'from elsewhere', by: 'ops' });
    held.release();
    await expect.poll(async () => (await other.get(run.id)).waitReason, { timeout: 20_000 }).toBe('paused');
    expect(asked).toEqual([0]);
    expect((await pauseWaitOf(other, run.id))?.request).toMatchObject({ reason: 'from elsewhere', by: 'ops' });
    await other.resume(run.id, { by: 'ops' });
    await expect.poll(async () => (await other.get(run.id)).status, { timeout: 20_000 }).toBe('succeeded');
    expect([...asked, ...second.asked]).toEqual([0, 1, 2]);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('refuses asks it cannot carry out, changing nothing', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const { options, held } = setup(database, effects);
    const runtime = openRuntime(options);
    await expect(runtime.pause('no-such-run')).rejects.toMatchObject({ code: 'run.not_found' });
    const run = await runtime.start({ input: 'go', sessionId: 's' });
    await held.running;
    await expect(runtime.pause(run.id, { reason: 'x'.repeat(2001) })).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(runtime.pause(run.id, { by: 7 as unknown as string })).rejects.toMatchObject({
      code: 'input.invalid',
    });
    await expect(runtime.resume(run.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
    const queued = await runtime.start({ input: 'later', sessionId: 's', onBusy: 'enqueue' });
    await expect(runtime.pause(queued.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
    expect((await runtime.get(run.id)).pauseRequested).toBeNull();
    held.release();
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    await expect(runtime.pause(run.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
    expect((await runtime.wait(queued.id)).status).toBe('succeeded');
  });
});

it('closes cleanly with a pause asked and not reached', async () => {
  const { database, effects } = await freshDatabaseOf('sqlite');
  const { options, held } = setup(database, effects);
  const runtime = createRuntime(options);
  const run = await runtime.start({ input: 'go' });
  await held.running;
  await runtime.pause(run.id);
  await runtime.close();
  // Reopened, the ask still stands: the interrupted read call runs again, then the run pauses.
  const again = setup(database, effects);
  again.held.release();
  const reopened = openRuntime(again.options);
  expect(await reopened.wait(run.id)).toMatchObject({ status: 'waiting_human', waitReason: 'paused' });
  expect(again.asked).toEqual([]);
});
