/**
 * Waits on a call's work elsewhere with a tool of one's own (`saveHandle`, `detach`,
 * `pollHandle`): `wait()` returns at the end only, a child run's task wait is no person's wait for
 * its parent, a `read` tool whose poll keeps throwing fails its call once (the model is told)
 * instead of running again forever, and work past the call's time limit is cancelled and its
 * outcome is unknown (an `unsafe` call then waits for a person).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentTool,
  createScriptedPlanner,
  defineAgent,
  defineTool,
  type Effect,
  type HandlePoll,
  type PollContext,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';
import { scaled } from '../helpers/limits.js';
import { spawnChild } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';

/** A tool that starts a job elsewhere and lets go; `poll` says what each look at the job finds. */
function jobTool(
  effect: Effect,
  poll: (handle: unknown, ctx: PollContext) => Promise<HandlePoll>,
  extra: { timeoutMs?: number; cancelled?: string[] } = {},
) {
  const started: string[] = [];
  const tool = defineTool({
    name: 'job.run',
    description: 'Runs a job elsewhere',
    input: z.object({ name: z.string() }),
    effect,
    risk: 'low',
    ...(extra.timeoutMs !== undefined ? { timeoutMs: extra.timeoutMs } : {}),
    execute: async ({ name }, ctx) => {
      started.push(name);
      await ctx.saveHandle?.({ job: name });
      return ctx.detach!({ pollAfterMs: 200 });
    },
    pollHandle: poll,
    cancelHandle: async (handle) => void extra.cancelled?.push((handle as { job: string }).job),
  });
  return { tool, started };
}

/** A planner that runs the job, then answers with what the call gave. */
const jobPlanner = () =>
  createScriptedPlanner([
    { type: 'tool_calls', calls: [{ tool: 'job.run', args: { name: 'nightly' } }] },
    (request) => ({
      type: 'final',
      answer: `job: ${String(request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '')}`,
    }),
  ]);

describe.each(ALL_DIALECTS)('waits on work elsewhere with a tool of its own (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('returns from wait() at the end only, and counts the call once', async () => {
    const { database } = await freshDatabaseOf(dialect);
    let polls = 0;
    const { tool, started } = jobTool('unsafe', async () =>
      ++polls < 3 ? { done: false, pollAfterMs: 200 } : { done: true, output: 'finished' },
    );
    const runtime = openRuntime({ database, tools: [tool], planner: jobPlanner() });
    const run = await runtime.start({ input: 'run the nightly job' });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'job: finished' });
    expect(polls).toBe(3);
    expect(started).toEqual(['nightly']);
    const states = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'state').map((e) => e.data.to);
    expect(states).toEqual([
      'planning',
      'executing',
      'waiting_human',
      'executing',
      'planning',
      'executing',
      'succeeded',
    ]);
    expect(done.usage.toolCalls).toBe(1);
  });

  it("keeps a parent's wait() from returning while its child waits on a task: no person is asked", async () => {
    const { database } = await freshDatabaseOf(dialect);
    let release = false;
    const { tool } = jobTool('idempotent', async () =>
      release ? { done: true, output: 'finished' } : { done: false, pollAfterMs: 200 },
    );
    const worker = defineAgent({ name: 'worker', instructions: 'Runs jobs.', tools: [tool], planner: jobPlanner() });
    const runtime = openRuntime({
      database,
      tools: [agentTool(worker)],
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'agent.worker', args: { input: 'run it' } }] },
        (request) => ({
          type: 'final',
          answer: `parent: ${String(request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '')}`,
        }),
      ]),
    });
    const run = await runtime.start({ input: 'delegate the job' });
    let settled = false;
    const waited = runtime.wait(run.id).then((r) => {
      settled = true;
      return r;
    });
    // Awaited below; a failed check before that must not leave it rejecting unheard.
    waited.catch(() => undefined);
    // Both durable: the parent waiting on its child, the child waiting on its task (in any order).
    await waitUntil(async () => {
      const parent = await runtime.get(run.id);
      const [child] = parent.children;
      if (parent.waitReason !== 'child' || child === undefined) return false;
      return (await runtime.get(child.runId)).waitReason === 'task';
    }, 'the parent to wait on its child, and the child on its task');
    const parent = await runtime.get(run.id);
    expect(parent).toMatchObject({ status: 'waiting_human', waitReason: 'child' });
    expect(parent.childWait?.asking).toBeNull();
    expect(settled).toBe(false);
    release = true;
    expect(await waited).toMatchObject({ status: 'succeeded', answer: 'parent: job: finished' });
  });

  it('fails a read call whose poll keeps throwing once, telling the model, instead of running it again', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const { tool, started } = jobTool('read', async () => {
      throw new Error('the job service answered nonsense');
    });
    const runtime = openRuntime({ database, tools: [tool], planner: jobPlanner() });
    const done = await runtime.wait((await runtime.start({ input: 'run the nightly job' })).id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toMatch(/the job service answered nonsense/);
    expect(started).toEqual(['nightly']);
    const [call] = await runtime.toolCalls(done.id);
    expect(call).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('cancels work past the call time limit, and an unsafe call of unknown outcome waits for a person', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const cancelled: string[] = [];
    const { tool, started } = jobTool('unsafe', async () => ({ done: false, pollAfterMs: 200 }), {
      timeoutMs: 300,
      cancelled,
    });
    const runtime = openRuntime({ database, tools: [tool], planner: jobPlanner() });
    const run = await runtime.start({ input: 'run the nightly job' });
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
    expect(cancelled).toEqual(['nightly']);
    expect(started).toEqual(['nightly']);
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({ status: 'unknown', handle: null });
    const task = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'task').map((e) => e.data.status);
    expect(task).toEqual(['waiting', 'unknown']);
  });
});

describe('a process that only started a run waiting on its task', () => {
  it('stays alive until the run has ended: the runtime polls the task', async () => {
    const { db, dir } = tempFiles();
    const log = join(dir, 'polls.log');
    const child = await spawnChild('test/helpers/task-idle-child.ts', [db, log], { timeoutMs: scaled(60_000) });
    expect(child.code, child.stderr).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('poll 1\npoll 2\nanswered\n');
  });
});
