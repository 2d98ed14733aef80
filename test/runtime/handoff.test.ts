/**
 * Handoffs (`handoff(agent)`, `handoff.back`): a call hands the run's conversation to another
 * agent of the deployment, which plans the next steps with its own planner, tools and policy
 * until it hands back. The handoff stack is in the run's checkpoint (a restart resumes with the
 * same agent on top), each step records the agent that planned it, `handoff` events tell each
 * change, a fork starts with the stack its source had at that step, and handoffs that cannot
 * happen are failed calls the model is told of. On a SQLite file and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineAgent, defineTool, handoff, type Runtime } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { handoffOptions, type Offered } from '../helpers/handoff-agents.js';

describe.each(ALL_DIALECTS)('handoffs within a run (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  async function handoffEvents(runtime: Runtime, runId: string) {
    return (await eventsOf(runtime, runId)).filter((e) => e.type === 'handoff').map((e) => e.data);
  }

  it('hands over, runs the other agent with its tools and policy across a restart, and hands back', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const effects: string[] = [];
    const offered: Offered = new Map();
    const options = handoffOptions(database, effects, offered);
    let runtime = openRuntime(options);
    const run = await runtime.start({ input: 'I want my money back for A1' });

    // Billing's refund needs approval (its tool's risk): the run waits with billing on top.
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'approval' });
    expect(waiting.handoffStack).toEqual([
      {
        agent: 'billing',
        step: 1,
        toolCallId: `${run.id}.s0.c0`,
        tools: ['billing.refund'],
        instructionsSha256: expect.stringMatching(/^[0-9a-f]{16}$/),
      },
    ]);
    expect(offered.get(0)).toEqual({ agent: 'triage', tools: ['handoff.billing'] });
    expect(offered.get(1)).toEqual({ agent: 'billing', tools: ['billing.refund', 'handoff.back'] });

    // A restart while billing is on top: the new process resumes with billing.
    runtime = await restart(runtime, handoffOptions(database, effects, offered));
    expect((await runtime.get(run.id)).handoffStack.map((e) => e.agent)).toEqual(['billing']);
    await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'alice' });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'triage: {"refunded":"A1"}', handoffStack: [] });
    expect(effects).toEqual(['A1']);
    expect(offered.get(2)?.agent).toBe('billing');
    expect(offered.get(3)).toEqual({ agent: 'triage', tools: ['handoff.billing'] });

    // Each step names the agent that planned it; the ledger has both handoff calls.
    const steps = await runtime.steps(run.id);
    expect(steps.map((s) => s.agent)).toEqual(['triage', 'billing', 'billing', 'triage']);
    const calls = await runtime.toolCalls(run.id);
    expect(calls.map((c) => [c.tool, c.status])).toEqual([
      ['handoff.billing', 'succeeded'],
      ['billing.refund', 'succeeded'],
      ['handoff.back', 'succeeded'],
    ]);
    const told = await handoffEvents(runtime, run.id);
    expect(told).toEqual([
      {
        step_index: 0,
        tool_call_id: `${run.id}.s0.c0`,
        direction: 'to',
        from: 'triage',
        to: 'billing',
        reason: 'a refund',
        handoff_stack: [
          {
            agent: 'billing',
            step: 1,
            tool_call_id: `${run.id}.s0.c0`,
            tools: ['billing.refund'],
            instructions_sha256: expect.stringMatching(/^[0-9a-f]{16}$/),
          },
        ],
      },
      {
        step_index: 2,
        tool_call_id: `${run.id}.s2.c0`,
        direction: 'back',
        from: 'billing',
        to: 'triage',
        reason: 'refund done',
        handoff_stack: [],
      },
    ]);
    const stepEvents = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'step');
    expect(stepEvents.map((e) => [e.data.agent, e.data.handoff_depth])).toEqual([
      ['triage', 0],
      ['billing', 1],
      ['billing', 1],
      ['triage', 0],
    ]);
  });

  it('forks a run at a step planned by the agent handed to: the fork plans it with that agent', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const effects: string[] = [];
    const offered: Offered = new Map();
    const runtime = openRuntime(handoffOptions(database, effects, offered));
    const run = await runtime.start({ input: 'refund A1' });
    const waiting = await runtime.wait(run.id);
    await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');

    // At step 2 billing was on top (it handed back there): the fork's step 2 is billing's again.
    offered.clear();
    const fork = await runtime.fork(run.id, { atStep: 2 });
    expect(fork.handoffStack.map((e) => [e.agent, e.toolCallId])).toEqual([['billing', `${fork.id}.s0.c0`]]);
    const forked = await runtime.wait(fork.id);
    expect(forked).toMatchObject({ status: 'succeeded', answer: 'triage: {"refunded":"A1"}', handoffStack: [] });
    expect([...offered.entries()]).toEqual([
      [2, { agent: 'billing', tools: ['billing.refund', 'handoff.back'] }],
      [3, { agent: 'triage', tools: ['handoff.billing'] }],
    ]);
    expect((await runtime.steps(fork.id)).map((s) => s.agent)).toEqual(['triage', 'billing', 'billing', 'triage']);
    // The refund was the source's (copied): it never ran again.
    expect(effects).toEqual(['A1']);
  });

  it('tells the model when a handoff cannot happen: a second in one step, a hand-back with none to return to', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const offered: Offered = new Map();
    const billing = defineAgent({
      name: 'billing',
      instructions: 'You handle refunds.',
      tools: [],
      planner: createScriptedPlanner((request) => {
        offered.set(request.stepIndex, { agent: 'billing', tools: request.tools.map((t) => t.name) });
        return { type: 'final', answer: request.tools.map((t) => t.name).join(',') };
      }),
    });
    const runtime = openRuntime({
      database,
      agent: 'triage',
      planner: createScriptedPlanner([
        {
          type: 'tool_calls',
          calls: [
            { tool: 'handoff.back', args: {} },
            { tool: 'handoff.billing', args: {} },
            { tool: 'handoff.billing', args: {} },
          ],
        },
      ]),
      tools: [handoff(billing)],
    });
    const run = await runtime.start({ input: 'go' });
    // Billing is on top after step 0 (its first handoff): it plans step 1; a final answer ends the run.
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'handoff.back' });
    const calls = await runtime.toolCalls(run.id);
    expect(calls.map((c) => [c.tool, c.status])).toEqual([
      ['handoff.back', 'failed'],
      ['handoff.billing', 'succeeded'],
      ['handoff.billing', 'failed'],
    ]);
    expect(calls[0]!.result).toMatchObject({ content: 'There is no agent to hand the conversation back to' });
    expect(String((calls[2]!.result as { content: unknown }).content)).toMatch(/one handoff a step/);
    expect(offered.get(1)?.agent).toBe('billing');
    expect(done.handoffStack.map((e) => e.agent)).toEqual(['billing']);
    expect(await handoffEvents(runtime, run.id)).toHaveLength(1);
  });

  it('fails a run handed to an agent the runtime that resumes it lacks, naming the agent', async () => {
    const { database } = await freshDatabaseOf(dialect);
    let held: (() => void) | null = null;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const options = handoffOptions(database, []);
    // Billing's first step is held (its planner never asked) until the process stops.
    const runtime = openRuntime({
      ...options,
      hooks: {
        beforeActor: async ({ actor, stepIndex, signal }) => {
          if (actor !== 'planner' || stepIndex !== 1) return;
          held!();
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        },
      },
    });
    const run = await runtime.start({ input: 'refund A1' });
    await holding;
    // The handoff is durable (its step's unit commits while billing's planner is held).
    while ((await runtime.get(run.id)).handoffStack.length === 0) await new Promise((r) => setImmediate(r));
    // A deployment whose triage no longer hands to billing.
    const reopened = await restart(runtime, {
      database,
      agent: 'triage',
      planner: createScriptedPlanner(() => ({ type: 'final', answer: 'triage alone' })),
      tools: [],
    });
    const ended = await reopened.wait(run.id);
    expect(ended).toMatchObject({ status: 'failed', failure: { code: 'run.agent_mismatch' } });
    expect(ended.failure?.message).toMatch(/handed to agent 'billing'/);
  });

  it('refuses a decision on a step of an agent the runtime lacks, keeping the wait for one that has it', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const effects: string[] = [];
    const runtime = openRuntime(handoffOptions(database, effects));
    const run = await runtime.start({ input: 'refund A1' });
    const waiting = await runtime.wait(run.id);
    expect(waiting.handoffStack.map((e) => e.agent)).toEqual(['billing']);
    // A deployment whose triage no longer hands to billing cannot decide billing's call.
    const lacking = await restart(runtime, {
      database,
      agent: 'triage',
      planner: createScriptedPlanner(() => ({ type: 'final', answer: 'triage alone' })),
      tools: [],
    });
    const refused = await lacking.approve(run.id, waiting.pendingApprovalId!, { by: 'alice' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'run.agent_mismatch' });
    expect((refused as Error).message).toMatch(/planned by agent 'billing', which this runtime does not have/);
    expect(await lacking.get(run.id)).toMatchObject({
      status: 'waiting_human',
      pendingApprovalId: waiting.pendingApprovalId,
    });
    expect((await lacking.approvals(run.id)).map((a) => a.status)).toEqual(['pending']);
    // The deployment with billing decides it, and the refund runs once.
    const whole = await restart(lacking, handoffOptions(database, effects));
    await whole.approve(run.id, waiting.pendingApprovalId!, { by: 'alice' });
    expect((await whole.wait(run.id)).status).toBe('succeeded');
    expect(effects).toEqual(['A1']);
  });

  it('stops handoffs past the depth limit, the model told to hand back first', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const noop = defineTool({
      name: 'loop.noop',
      description: 'Does nothing',
      input: z.object({}),
      effect: 'read',
      risk: 'low',
      execute: () => 'ok',
    });
    const inner = defineAgent({
      name: 'inner',
      instructions: 'You go deeper.',
      tools: [noop],
      planner: createScriptedPlanner(() => ({ type: 'final', answer: 'inner' })),
    });
    const deeper = handoff(inner, { name: 'handoff.deeper' });
    // The runtime's `agents` option stands for the agent of that name: here one that hands to itself.
    const selfish = defineAgent({
      name: 'inner',
      instructions: 'You go deeper.',
      tools: [noop, deeper],
      planner: createScriptedPlanner((request) =>
        request.stepIndex < 9
          ? { type: 'tool_calls', calls: [{ tool: 'handoff.deeper', args: {} }] }
          : { type: 'final', answer: 'deep enough' },
      ),
    });
    const runtime = openRuntime({
      database,
      agent: 'outer',
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'handoff.deeper', args: {} }] }]),
      tools: [deeper],
      agents: [selfish],
    });
    const run = await runtime.start({ input: 'dig', options: { maxSteps: 20 } });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'deep enough' });
    expect(done.handoffStack).toHaveLength(8);
    const calls = await runtime.toolCalls(run.id);
    expect(calls.map((c) => c.status)).toEqual([...Array<string>(8).fill('succeeded'), 'failed']);
    expect(String((calls[8]!.result as { content: unknown }).content)).toMatch(/at most 8; hand back first/);
  });
});
