/**
 * Agents called as tools (`agentTool`): a parent's call starts a child run of another agent, the
 * parent waits for it holding nothing, and the child's answer is the call's result. The child's
 * approval is shown on the parent and decided on either id, once; the child's effect happens
 * once; a failing child is a failed call the model is told of; a child's budget is a slice of
 * what its parent has left, and its usage is the parent's too. On a SQLite file and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentTool,
  BatonError,
  createScriptedPlanner,
  defineAgent,
  defineTool,
  type Planner,
  type Runtime,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { clerkAgent, lastObservation, parentPlanner } from '../helpers/tree-agents.js';

describe.each(ALL_DIALECTS)('agents called as tools (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  async function open(effects: string[], extra: { planner?: Planner } = {}) {
    const { database } = await freshDatabaseOf(dialect);
    const clerk = clerkAgent(effects);
    return openRuntime({ database, planner: extra.planner ?? parentPlanner(), tools: [agentTool(clerk)] });
  }

  it("shows the child's approval on the parent, takes it on the parent's id, and uses the child's answer", async () => {
    const effects: string[] = [];
    const runtime = await open(effects);
    const parent = await runtime.start({ input: 'tidy up' });
    const waiting = await runtime.wait(parent.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'child' });
    const childId = `${parent.id}.s0.c0.child`;
    expect(waiting.childWait).toMatchObject({
      runId: childId,
      agent: 'clerk',
      status: 'waiting_human',
      asking: { runId: childId, waitReason: 'approval', pendingApprovalId: `${childId}.s0.approval` },
    });
    expect(waiting.children).toEqual([
      { runId: childId, toolCallId: `${parent.id}.s0.c0`, agent: 'clerk', status: 'waiting_human' },
    ]);
    const child = await runtime.get(childId);
    expect(child).toMatchObject({ parent: { runId: parent.id, toolCallId: `${parent.id}.s0.c0` } });
    expect(child.agent?.name).toBe('clerk');
    expect(effects).toEqual([]);

    // Decided on the parent's id; the same wait on the child's id is decided already.
    await runtime.approve(parent.id, waiting.childWait!.asking!.pendingApprovalId, { by: 'alice' });
    const again = await runtime
      .approve(childId, waiting.childWait!.asking!.pendingApprovalId, { by: 'bob' })
      .catch((error: unknown) => error);
    expect(again).toBeInstanceOf(BatonError);
    expect((again as BatonError).code).toBe('approval.already_decided');

    const done = await runtime.wait(parent.id);
    expect(done).toMatchObject({ status: 'succeeded', childWait: null });
    expect(done.answer).toBe('parent: clerk: {"archived":"a.json"}');
    expect(effects).toEqual(['a.json']);
    expect((await runtime.get(childId)).status).toBe('succeeded');

    // The parent's ledger names the child; its events tell the child's start and end.
    const [call] = await runtime.toolCalls(parent.id);
    expect(call).toMatchObject({ tool: 'agent.clerk', status: 'succeeded', childRunId: childId });
    const told = (await eventsOf(runtime, parent.id)).filter((e) => e.type === 'child').map((e) => e.data.status);
    expect(told).toEqual(['started', 'succeeded']);
    // The child's usage is the parent's too: its two planner calls and one tool call.
    expect(done.usage.llmCalls).toBe(2 + 2);
    expect(done.usage.toolCalls).toBe(1 + 1);
  });

  it('tells the model the child failed when it is rejected: the call fails and the parent goes on', async () => {
    const effects: string[] = [];
    const runtime = await open(effects);
    const parent = await runtime.start({ input: 'tidy up' });
    const waiting = await runtime.wait(parent.id);
    const asking = waiting.childWait!.asking!;
    await runtime.reject(asking.runId, asking.pendingApprovalId, { by: 'alice', terminate: true });
    const done = await runtime.wait(parent.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toMatch(/^parent: .*did not finish its task/);
    expect(effects).toEqual([]);
    const [call] = await runtime.toolCalls(parent.id);
    expect(call).toMatchObject({ status: 'failed', childRunId: asking.runId });
  });

  it('prunes a child only with its parent: kept while the parent is, gone in the same prune', async () => {
    const effects: string[] = [];
    const planner = createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'agent.clerk', args: { input: 'archive a.json' } }] },
      { type: 'ask', question: 'Anything else?' },
      (request) => ({ type: 'final', answer: `parent: ${lastObservation(request)}` }),
    ]);
    const runtime = await open(effects, { planner });
    const parent = await runtime.start({ input: 'tidy up' });
    const childId = `${parent.id}.s0.c0.child`;
    const first = await runtime.wait(parent.id);
    await runtime.approve(parent.id, first.childWait!.asking!.pendingApprovalId, { by: 'alice' });
    const asked = await runtime.wait(parent.id);
    expect(asked).toMatchObject({ status: 'waiting_human', waitReason: 'input' });
    expect((await runtime.get(childId)).status).toBe('succeeded');

    // The child finished; its parent has not: the child stays.
    expect(await runtime.prune({ finishedBefore: Date.now() + 60_000 })).toMatchObject({ runs: 0 });
    expect((await runtime.get(childId)).status).toBe('succeeded');

    await runtime.answer(parent.id, asked.pendingInput!.id, { answer: 'no', by: 'alice' });
    expect((await runtime.wait(parent.id)).status).toBe('succeeded');
    // Both finished: one prune takes the parent and its child together.
    expect(await runtime.prune({ finishedBefore: Date.now() + 60_000 })).toMatchObject({ runs: 2, batches: 1 });
    for (const id of [parent.id, childId]) {
      expect(await runtime.get(id).catch((error: unknown) => (error as BatonError).code)).toBe('run.not_found');
    }
  });

  it('stops an agent that calls itself at the depth limit, the deepest call failing and the model told', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const echo = defineAgent({
      name: 'echo',
      instructions: 'Ask yourself.',
      tools: [],
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'agent.echo', args: { input: 'deeper' } }] },
        (request) => ({ type: 'final', answer: `echo(${lastObservation(request)})` }),
      ]),
    });
    // An agent whose tool is itself (its tools are a list it can be added to once it exists).
    (echo.tools as unknown[]).push(agentTool(echo));
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'agent.echo', args: { input: 'go' } }] },
        (request) => ({ type: 'final', answer: lastObservation(request) }),
      ]),
      tools: [agentTool(echo)],
    });
    const root = await runtime.start({ input: 'go' });
    const done = await runtime.wait(root.id);
    expect(done.status).toBe('succeeded');
    let deepest = root.id;
    for (let depth = 1; depth <= 8; depth += 1) deepest = `${deepest}.s0.c0.child`;
    const [refused] = await runtime.toolCalls(deepest);
    expect(refused).toMatchObject({ tool: 'agent.echo', status: 'failed', childRunId: null });
    expect(refused!.result?.failure?.message).toMatch(
      /8 child runs deep, and agents called as tools nest at most 8 deep/,
    );
    expect(await runtime.get(`${deepest}.s0.c0.child`).catch((error: unknown) => (error as BatonError).code)).toBe(
      'run.not_found',
    );
    expect(done.answer).toMatch(/^(echo\(){8}.*nest at most 8 deep/);
  });

  it('gives a child no more budget than its parent has left', async () => {
    const effects: string[] = [];
    const { database } = await freshDatabaseOf(dialect);
    // A greedy child: it thinks step after step (a new thought each time) and never answers.
    const think = defineTool({
      name: 'think',
      description: 'Thinks',
      input: z.object({ n: z.number() }),
      effect: 'read',
      risk: 'low',
      execute: ({ n }) => ({ thought: n }),
    });
    const greedy = defineAgent({
      name: 'greedy',
      instructions: 'Think forever.',
      tools: [think],
      planner: {
        next: async (request) => ({
          decision: { type: 'tool_calls', calls: [{ tool: 'think', args: { n: request.stepIndex } }] },
          usage: { inputTokens: 1, outputTokens: 1 },
        }),
      },
    });
    const runtime: Runtime = openRuntime({
      database,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'agent.greedy', args: { input: 'think' } }] },
        (request) => ({ type: 'final', answer: `parent: ${lastObservation(request)}` }),
      ]),
      tools: [agentTool(greedy)],
    });
    const parent = await runtime.start({ input: 'go', options: { budget: { maxLlmCalls: 5 } } });
    const done = await runtime.wait(parent.id);
    const child = await runtime.get(`${parent.id}.s0.c0.child`);
    // The parent used one call to plan; the child got the four left, and stopped there.
    expect(child).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    expect(child.usage.llmCalls).toBe(4);
    // The parent is told, and its own budget is spent with the child's: it cannot plan again.
    expect(done).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    expect(done.usage.llmCalls).toBe(5);
    expect(effects).toEqual([]);
  });
});
