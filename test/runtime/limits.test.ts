import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type Decision, type RuntimeOptions } from '../../src/index.js';
import { openRuntime, restart } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { scaled } from '../helpers/limits.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld } from '../helpers/world.js';

const forever = (): Decision => ({ type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'again' } }] });

/** A read tool that runs until it is aborted, and says when it started and whether it was aborted. */
function createSlowTool(aborted: string[] = [], started: string[] = []) {
  return defineTool({
    name: 'slow',
    description: 'Waits until aborted',
    input: z.object({}),
    effect: 'read',
    risk: 'low',
    execute: (_input, ctx) =>
      new Promise((_resolve, reject) => {
        started.push(ctx.toolCallId);
        ctx.signal.addEventListener('abort', () => {
          aborted.push(ctx.toolCallId);
          reject(new Error('aborted'));
        });
      }),
  });
}

describe('limits', () => {
  it('ends a run that reaches maxSteps with max_steps', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(forever),
      tools: createWorld(effects).all(),
    });
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { maxSteps: 4 } })).id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'max_steps' });
    expect(run.usage.llmCalls).toBe(4);
  });

  it.each([
    ['maxLlmCalls', { maxLlmCalls: 3 }, 'max_llm_calls'],
    ['maxToolCalls', { maxToolCalls: 2 }, 'max_tool_calls'],
    ['maxTokens', { maxTokens: 30 }, 'max_tokens'],
  ] as const)('ends a run that uses up %s with budget_exceeded', async (_name, budget, which) => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(forever),
      tools: createWorld(effects).all(),
    });
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget } })).id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    expect(run.failure).toMatchObject({ code: 'run.budget_exceeded' });
    expect(run.failure!.message).toContain(which);
    if ('maxLlmCalls' in budget) expect(run.usage.llmCalls).toBe(3);
    if ('maxToolCalls' in budget) expect(run.usage.toolCalls).toBe(2);
    if ('maxTokens' in budget) expect(run.usage.tokens).toBeGreaterThanOrEqual(30);
  });

  it('applies runtime-wide default budgets, which a run can override', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(forever),
      tools: createWorld(effects).all(),
      defaults: { budget: { maxToolCalls: 1 } },
    });
    const a = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(a.usage.toolCalls).toBe(1);
    const b = await runtime.wait((await runtime.start({ input: 'x', options: { budget: { maxToolCalls: 3 } } })).id);
    expect(b.usage.toolCalls).toBe(3);
  });

  it('ends a run past its deadline with timeout and aborts the running tool', async () => {
    const { db } = tempFiles();
    const aborted: string[] = [];
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'slow', args: {} }] }]),
      tools: [createSlowTool(aborted)],
    });
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget: { timeoutMs: 200 } } })).id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'timeout' });
    expect(aborted).toEqual([`${run.id}.s0.c0`]);
  });

  it('fires a persisted deadline after a restart', async () => {
    const { db } = tempFiles();
    const options: RuntimeOptions = {
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'slow', args: {} }] }]),
      tools: [createSlowTool()],
    };
    let runtime = openRuntime(options);
    // Scaled: the run must be seen executing before the deadline, on a loaded machine too.
    const started = await runtime.start({ input: 'x', options: { budget: { timeoutMs: scaled(400) } } });
    await expect.poll(async () => (await runtime.get(started.id)).status).toBe('executing');
    await runtime.close();
    // The deadline passes while no runtime is open.
    await waitUntil(() => Date.now() > started.deadlineAt!, 'the deadline to pass');
    runtime = await restart(runtime, options);
    const run = await runtime.wait(started.id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'timeout' });
    expect(run.deadlineAt).toBe(started.deadlineAt);
  });

  it('fires the deadline of a run waiting for approval after a restart', async () => {
    const { db, effects } = tempFiles();
    const options: RuntimeOptions = {
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'v' } }] }]),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
    };
    let runtime = openRuntime(options);
    // Scaled: the run must reach its approval wait before the deadline, on a loaded machine too.
    const budget = { timeoutMs: scaled(300) };
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget } })).id);
    expect(run.status).toBe('waiting_human');
    runtime = await restart(runtime, options);
    await expect.poll(async () => await runtime.get(run.id)).toMatchObject({ status: 'failed', stopReason: 'timeout' });
  });

  it('cancels a run: it ends cancelled, the tool is aborted, and a second cancel is refused', async () => {
    const { db } = tempFiles();
    const aborted: string[] = [];
    const calls: string[] = [];
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'slow', args: {} }] }]),
      tools: [createSlowTool(aborted, calls)],
    });
    const started = await runtime.start({ input: 'x' });
    await waitUntil(() => calls.length === 1, 'the tool to be running');
    const run = await runtime.cancel(started.id, { reason: 'changed my mind' });
    expect(run).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(run.failure?.message).toContain('changed my mind');
    expect(aborted).toHaveLength(1);
    await expect(runtime.cancel(started.id)).rejects.toMatchObject({ code: 'run.invalid_transition' });
  });
});
