import { describe, expect, it } from 'vitest';
import { not, or, setup as setupMachine } from 'xstate';
import { describeMachine, MACHINE_VERSION } from '../../machines/index.js';
import {
  createScriptedPlanner,
  defineAgent,
  resolveAgentPlanner,
  RUN_STATUSES,
  type RunEventRecord,
} from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { twoApprovers } from '../fixtures/two-approvers.js';
import { createWorld } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';

function setup() {
  const { db, effects } = tempFiles();
  return openRuntime({
    database: db,
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'look' } }] },
      { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'send' } }] },
      { type: 'final', answer: 'done' },
    ]),
    tools: [createWorld(effects).read, createWorld(effects, { risk: 'high' }).unsafe],
  });
}

describe('runtime API for services', () => {
  it('reads a page of the event log, the checkpoint of a run and its own counters', async () => {
    const runtime = setup();
    const before = runtime.stats();
    expect(before).toEqual({
      commits: expect.any(Number),
      liveRuns: 0,
      wakeTimers: 0,
      claimRounds: expect.any(Number),
    });
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('waiting_human');
    // A run waiting for a human is not held in memory.
    await expect.poll(() => runtime.stats().liveRuns).toBe(0);
    expect(runtime.stats().commits).toBeGreaterThan(before.commits);

    const all = await runtime.readEvents(run.id);
    const following: RunEventRecord[] = [];
    for await (const event of runtime.events(run.id, { follow: false })) following.push(event);
    expect(all).toEqual(following);
    expect(await runtime.readEvents(run.id, { after: 2, limit: 3 })).toEqual(all.slice(2, 5));
    expect(await runtime.readEvents(run.id, { after: all.length })).toEqual([]);

    const row = (await storeOf(runtime).getRun(run.id))!;
    expect(await runtime.checkpoint(run.id)).toEqual({
      version: row.version,
      bytes: Buffer.byteLength(row.snapshot),
      machine: { name: 'baton.run', version: MACHINE_VERSION },
    });
    await expect(runtime.checkpoint('run_missing')).rejects.toThrow(/does not exist/);
    await expect(runtime.list({ status: 'done' as never })).rejects.toThrow(/Unknown status 'done'/);
    await expect(runtime.readEvents('run_missing')).rejects.toThrow(/does not exist/);

    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    await runtime.wait(run.id);
    // A finished run is no longer held in memory.
    await expect.poll(() => runtime.stats().liveRuns).toBe(0);
  });

  it('keeps the tenant of a run and lists by tenant', async () => {
    const runtime = setup();
    const a = await runtime.start({ input: 'a', context: { tenant_id: 'acme', user_id: 'u1' } });
    await runtime.start({ input: 'b', context: { tenant_id: 'globex' } });
    const c = await runtime.start({ input: 'c' });
    expect(a.tenantId).toBe('acme');
    expect((await runtime.list({ tenantId: 'acme' })).runs.map((r) => r.id)).toEqual([a.id]);
    expect((await runtime.list({ tenantId: 'nobody' })).runs).toEqual([]);
    expect((await runtime.list()).runs).toHaveLength(3);
    // A run started without a tenant is the default tenant's, as a server in dev mode says.
    expect(c.tenantId).toBe('default');
    expect((await runtime.get(c.id)).tenantId).toBe('default');
    expect((await runtime.list({ tenantId: 'default' })).runs.map((r) => r.id)).toEqual([c.id]);
  });

  it('reports the ledger and a trace with timed spans', async () => {
    const runtime = setup();
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice', reason: 'ok' });
    await runtime.wait(run.id);
    const calls = await runtime.toolCalls(run.id);
    expect(calls.map((c) => [c.tool, c.status, c.attempts])).toEqual([
      ['world.read', 'succeeded', 1],
      ['world.unsafe', 'succeeded', 1],
    ]);
    expect(calls[0]!.args).toEqual({ value: 'look' });
    expect(calls[0]!.result).toMatchObject({ status: 'ok', content: { value: 'look' } });

    const trace = await runtime.trace(run.id);
    expect(trace.run.status).toBe('succeeded');
    expect(trace.steps).toHaveLength(3);
    expect(trace.steps[0]!.context).toMatchObject({ included: 1, dropped: 0 });
    const kinds = trace.spans.map((s) => `${s.kind}:${s.name}`);
    expect(kinds).toContain('tool:tool world.read');
    expect(kinds).toContain(`approval:approval ${run.pendingApprovalId}`);
    expect(kinds.filter((k) => k.startsWith('plan:'))).toHaveLength(3);
    for (const span of trace.spans) expect(span.durationMs).toBeGreaterThanOrEqual(0);
    const approval = trace.spans.find((s) => s.kind === 'approval')!;
    expect(approval.attributes).toMatchObject({ decision: 'approved', by: 'alice' });
    expect(trace.spans.find((s) => s.name === 'tool world.unsafe')!.attributes.args).toBe('{"value":"send"}');
    await expect(runtime.trace('run_missing')).rejects.toThrow(expect.objectContaining({ code: 'run.not_found' }));
  });

  it('lets a service watch the committed events of every run', async () => {
    const runtime = setup();
    const seen: RunEventRecord[] = [];
    const stop = runtime.watch((event) => seen.push(event));
    const a = await runtime.start({ input: 'a' });
    const b = await runtime.start({ input: 'b' });
    await runtime.wait(a.id);
    await runtime.wait(b.id);
    stop();
    for (const id of [a.id, b.id]) {
      const own = seen.filter((e) => e.runId === id).map((e) => e.seq);
      expect(own).toEqual((await storeOf(runtime).listEvents(id)).map((e) => e.seq));
    }
    const before = seen.length;
    await runtime.start({ input: 'c' });
    expect(seen).toHaveLength(before);
  });

  it('describes the run machine as JSON', () => {
    const definition = describeMachine();
    expect(definition.id).toBe('run');
    expect(definition.version).toBe(MACHINE_VERSION);
    expect(Object.keys(definition.states)).toEqual([...RUN_STATUSES]);
    expect(definition.states.planning).toMatchObject({ type: 'atomic', invoke: ['planner'] });
    expect(definition.states.failed?.type).toBe('final');
    expect(JSON.parse(JSON.stringify(definition))).toEqual(definition);
  });

  it('names the guard of every guarded branch, composed guards part by part', () => {
    const { transitions } = describeMachine();
    const rejected = transitions.filter((t) => t.source === 'waiting_human' && t.event === 'rejected');
    expect(rejected.map((t) => [t.target, t.guard])).toEqual([
      // A person who ends a budget wait fails the run with that budget's stop reason.
      ['failed', 'and(isPendingApproval, isBudgetWait)'],
      // A terminating rejection that asks for compensation undoes the run first (in `executing`).
      ['executing', 'and(isPendingApproval, isTerminatingRejection, wantsCompensation)'],
      ['failed', 'and(isPendingApproval, isTerminatingRejection)'],
      ['executing', 'and(isPendingApproval, isUncertainWait)'],
      ['failed', 'and(isPendingApproval, isLastStep)'],
      ['planning', 'isPendingApproval'],
    ]);
    expect(rejected[1]?.guards).toEqual(['isPendingApproval', 'isTerminatingRejection', 'wantsCompensation']);
    expect(rejected[2]?.guards).toEqual(['isPendingApproval', 'isTerminatingRejection']);
    // Every branch of an event but the last in a state is guarded, or it would shadow the rest.
    const bySourceAndEvent = new Map<string, typeof transitions>();
    for (const t of transitions)
      bySourceAndEvent.set(`${t.source} ${t.event}`, [...(bySourceAndEvent.get(`${t.source} ${t.event}`) ?? []), t]);
    for (const branches of bySourceAndEvent.values()) {
      for (const t of branches.slice(0, -1)) expect(t.guard, `${t.source} --${t.event}[${t.branch}]`).not.toBeNull();
    }
    const named = new Set(transitions.flatMap((t) => t.guards));
    expect([...named].sort()).toEqual(
      [
        'asksOnBudget',
        'expiresToEnd',
        'isBudgetWait',
        'isInputWait',
        'isChildWait',
        'isTaskWait',
        'isStepWait',
        'resumesPlanning',
        'waitsOnDeadline',
        'isCompensating',
        'isLastStep',
        'isLoop',
        'isPendingApproval',
        'isTerminatingRejection',
        'isUncertainWait',
        'wantsCompensation',
        'pauseAsked',
        'canAskPause',
        'isPauseWait',
        'resumesPlanningAfterPause',
      ].sort(),
    );
    for (const t of transitions) expect(t.actions).not.toContain('unknown');
    // A plan counts its model call, and enters an operator's pause when one was asked.
    expect(transitions.filter((t) => t.event === 'plan_ready').map((t) => [t.guard, t.target, t.actions])).toEqual([
      ['pauseAsked', 'waiting_human', ['countPlan', 'enterPause']],
      [null, 'executing', ['countPlan']],
    ]);
    // A cancel that asks for compensation goes to `executing` to undo; any other ends the run.
    const cancels = transitions.filter((t) => t.event === 'cancel' && t.source === 'planning');
    expect(cancels.map((t) => [t.guard, t.target, t.actions])).toEqual([
      ['wantsCompensation', 'executing', ['compensate']],
      [null, 'failed', ['stop']],
    ]);
  });

  it('describes a nested variant and composed or/not guards', () => {
    const variant = setupMachine({ guards: { a: () => true, b: () => false } }).createMachine({
      id: 'variant',
      initial: 'waiting',
      states: {
        waiting: {
          initial: 'review',
          states: { review: { on: { ok: { target: 'second', guard: or(['a', not('b')]) } } }, second: {} },
          on: { done: '#variant.end' },
        },
        end: { type: 'final' },
      },
    });
    const description = describeMachine(variant, 7);
    expect(description).toMatchObject({ id: 'variant', version: 7, initial: 'waiting' });
    expect(description.states.waiting?.states.review?.path).toBe('waiting.review');
    expect(description.transitions.map((t) => [t.source, t.event, t.target, t.guard])).toEqual([
      ['waiting', 'done', 'end', null],
      ['waiting.review', 'ok', 'waiting.second', 'or(a, not(b))'],
    ]);
  });

  it("describes a variant from its definition, with the definition's name and version", () => {
    const description = describeMachine(twoApprovers);
    expect(description).toEqual(describeMachine(twoApprovers.machine, twoApprovers.version, twoApprovers.name));
    expect(description).toMatchObject({ name: twoApprovers.name, version: twoApprovers.version });
    expect(Object.keys(description.states)).toEqual(Object.keys(describeMachine(twoApprovers.machine).states));
  });
});

describe('agents', () => {
  it('declares an agent and refuses a bad name', () => {
    const agent = defineAgent({ name: 'helper', instructions: 'Help.', tools: [] });
    expect(agent.name).toBe('helper');
    expect(() => defineAgent({ name: 'Not OK', instructions: '', tools: [] })).toThrow(/must match/);
  });

  it('plans with its own planner, else a configured model, else its offline planner', () => {
    const own = createScriptedPlanner([]);
    const offline = createScriptedPlanner([]);
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    try {
      expect(resolveAgentPlanner(defineAgent({ name: 'a', instructions: 'x', tools: [], planner: own })).planner).toBe(
        own,
      );
      const withOffline = defineAgent({ name: 'b', instructions: 'x', tools: [], offlinePlanner: offline });
      expect(resolveAgentPlanner(withOffline).planner).toBe(offline);
      const model = resolveAgentPlanner(withOffline, { baseURL: 'http://127.0.0.1:9/v1', model: 'm' });
      expect(model.description).toBe('model m at http://127.0.0.1:9/v1');
      expect(() => resolveAgentPlanner(defineAgent({ name: 'c', instructions: 'x', tools: [] }))).toThrow(
        /has no planner/,
      );
    } finally {
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
      if (saved.url !== undefined) process.env.OPENAI_BASE_URL = saved.url;
    }
  });
});
