/**
 * The inspector's event fold, on the event logs of real runs (a SQLite file, and child
 * processes SIGKILLed mid-call for the recoveries): at every seq it must agree with what the
 * log itself says, and at the end with the ledger and usage the runtime recorded.
 */
import { describe, expect, it } from 'vitest';
import type { EventJson, FoldState } from '../../inspector/types.js';
import { applyEvent, foldEvents, initialState, resumptionSeqs } from '../../inspector/fold.js';
import { EVENT_NAMES } from '../../inspector/event-names.js';
import { LOG_EVENT_TYPES, type Runtime } from '../../src/index.js';
import { toEventJson } from '../../src/server/index.js';
import { crashPlanner, runChild } from '../helpers/crash-scenario.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { createServerAgent } from '../helpers/server-agent.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { createShop, SHOP_SCRIPT } from '../helpers/shop.js';
import { createScriptedPlanner } from '../../src/index.js';

async function wireEvents(runtime: Runtime, runId: string): Promise<EventJson[]> {
  return (await eventsOf(runtime, runId)).map((event) => toEventJson(event) as EventJson);
}

/** What the log says at `seq`, computed the plain way: the last state event, and every one before it. */
function expectedAt(events: EventJson[], seq: number) {
  const states = events.filter((e) => e.seq <= seq && e.type === 'state');
  const edges: Record<string, number> = {};
  for (const e of states)
    edges[`${String(e.data.from)}>${String(e.data.to)}`] =
      (edges[`${String(e.data.from)}>${String(e.data.to)}`] ?? 0) + 1;
  return {
    status: states.length ? String(states.at(-1)!.data.to) : 'pending',
    visited: [...new Set(['pending', ...states.map((e) => String(e.data.to))])],
    edges,
  };
}

function checkEverySeq(events: EventJson[]): FoldState {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  for (let seq = 0; seq <= events.length; seq += 1) {
    const state = foldEvents(events, seq);
    const expected = expectedAt(events, seq);
    expect(state.seq, `seq ${seq}`).toBe(seq);
    expect(state.status, `status at seq ${seq}`).toBe(expected.status);
    expect(state.visited, `visited at seq ${seq}`).toEqual(expected.visited);
    expect(state.edges, `edges at seq ${seq}`).toEqual(expected.edges);
  }
  return foldEvents(events);
}

describe('event fold', () => {
  it('agrees with the log at every seq and with the ledger and usage at the end', async () => {
    const { db, effects } = tempFiles();
    const agent = createServerAgent(effects);
    const runtime = openRuntime({ database: db, planner: agent.planner, tools: agent.tools });
    const run = await runtime.start({ input: 'write:3' });
    await runtime.wait(run.id);
    const events = await wireEvents(runtime, run.id);
    const state = checkEverySeq(events);
    const done = await runtime.get(run.id);
    expect(state).toMatchObject({ status: 'succeeded', answer: 'wrote 3', input: 'write:3' });
    expect(state.usage).toEqual({
      steps: done.usage.steps,
      llmCalls: done.usage.llmCalls,
      toolCalls: done.usage.toolCalls,
      tokens: done.usage.tokens,
      costUsd: done.usage.costUsd,
    });
    const ledger = await runtime.toolCalls(run.id);
    expect(Object.values(state.calls).map((c) => [c.id, c.tool, c.status, c.attempts, c.effect])).toEqual(
      ledger.map((c) => [c.id, c.tool, c.status, c.attempts, c.effect]),
    );
    expect(state.edges).toMatchObject({ 'planning>executing': 4, 'executing>planning': 3, 'executing>succeeded': 1 });
    expect(state.recoveries).toEqual([]);
  });

  it('shows the pending approval bound to its calls, then who decided', async () => {
    const { db, effects } = tempFiles();
    const agent = createServerAgent(effects);
    const runtime = openRuntime({ database: db, planner: agent.planner, tools: agent.tools });
    const run = await runtime.start({ input: 'mail' });
    const waiting = await runtime.wait(run.id);
    const asked = foldEvents(await wireEvents(runtime, run.id));
    expect(asked).toMatchObject({ status: 'waiting_human', waitReason: 'approval' });
    const pending = asked.approvals[asked.pendingApprovalId!];
    expect(pending).toMatchObject({ status: 'pending', reason: 'approval' });
    expect(pending!.toolCalls).toEqual([
      { id: expect.any(String), tool: 'mail.send', args: { to: 'ops@example.com' }, risk: 'high', reason: null },
    ]);
    expect(asked.calls[pending!.toolCalls[0]!.id]).toMatchObject({ status: 'awaiting_approval', risk: 'high' });
    await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'alice', reason: 'fine' });
    await runtime.wait(run.id);
    const events = await wireEvents(runtime, run.id);
    const state = checkEverySeq(events);
    expect(state.approvals[pending!.id]).toMatchObject({
      status: 'approved',
      decidedBy: 'alice',
      decisionReason: 'fine',
    });
    expect(state.calls[pending!.toolCalls[0]!.id]).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(state.pendingApprovalId).toBeNull();
  });

  it('shows each compensation on the call it undoes, and the report of the run', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(SHOP_SCRIPT),
      tools: createShop(effects),
    });
    const run = await runtime.start({ input: 'orders' });
    await runtime.wait(run.id);
    await runtime.cancel(run.id, { compensate: true });
    await runtime.wait(run.id);
    const events = await wireEvents(runtime, run.id);
    const state = checkEverySeq(events);
    expect(state.compensations.map((c) => [c.tool, c.status])).toEqual([
      ['shop.charge', 'started'],
      ['shop.charge', 'succeeded'],
      ['shop.notify', 'skipped'],
      ['shop.archive', 'started'],
      ['shop.archive', 'succeeded'],
      ['shop.charge', 'started'],
      ['shop.charge', 'succeeded'],
    ]);
    const ledger = await runtime.toolCalls(run.id);
    for (const row of ledger.filter((c) => c.compensates)) {
      expect(state.calls[row.compensates!]?.compensation, row.compensates!).toBe(row.status);
    }
    expect(state.calls[ledger.find((c) => c.tool === 'shop.lookup')!.id]?.compensation).toBeUndefined();
    expect(state.compensation).toMatchObject({ status: 'done', not_compensated: [{ tool: 'shop.notify' }] });
  });

  it('listens to every event type a run stream sends', () => {
    expect([...EVENT_NAMES, 'error'].sort()).toEqual([...LOG_EVENT_TYPES].sort());
  });

  it('ignores drafts, which are never stored', () => {
    const before = applyEvent(initialState(), {
      run_id: 'r',
      seq: 1,
      type: 'run.created',
      data: { input: 'x' },
      created_at: 1,
    });
    const after = applyEvent(before, {
      run_id: 'r',
      seq: 1,
      type: 'draft',
      data: { text: 'maybe', step_index: 0, attempt: 1 },
      created_at: 2,
    });
    expect(after).toBe(before);
  });
});

describe('event fold after a crash (SIGKILL of a child process mid-call)', () => {
  async function crashed(effect: 'idempotent' | 'reconcilable' | 'unsafe', at: 'tool.started' | 'tool.effect') {
    const files = tempFiles();
    const tool = `world.${effect}`;
    const outcome = await runChild(
      { db: files.db, effects: files.effects, tool, killAfterEffect: at === 'tool.effect' },
      at === 'tool.started' ? 'tool.started=kill' : '',
    );
    expect(outcome.signal, outcome.stderr).toBe('SIGKILL');
    const runtime = openRuntime({
      database: files.db,
      planner: crashPlanner(tool),
      tools: createWorld(files.effects).all(),
    });
    const runId = (await runtime.list()).runs[0]!.id;
    await runtime.wait(runId);
    return { runtime, runId, effects: files.effects };
  }

  it('marks an idempotent call run again after the crash', async () => {
    const { runtime, runId, effects } = await crashed('idempotent', 'tool.started');
    const events = await wireEvents(runtime, runId);
    const state = checkEverySeq(events);
    const [call] = Object.values(state.calls);
    expect(call).toMatchObject({ status: 'succeeded', attempts: 2, recovery: ['rerun'] });
    const actions = events.filter((e) => e.type === 'action');
    expect(actions.map((e) => e.data.recovery ?? null)).toEqual([null, 'rerun']);
    expect(resumptionSeqs(state)).toEqual([actions[1]!.seq]);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('marks a reconcilable call found done, and never runs it again', async () => {
    const { runtime, runId, effects } = await crashed('reconcilable', 'tool.effect');
    const state = checkEverySeq(await wireEvents(runtime, runId));
    expect(Object.values(state.calls)[0]).toMatchObject({ status: 'succeeded', attempts: 1, recovery: ['reconciled'] });
    expect(state.status).toBe('succeeded');
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('marks an unsafe call sent to a human, then run again when the human chose retry', async () => {
    const { runtime, runId, effects } = await crashed('unsafe', 'tool.started');
    let state = checkEverySeq(await wireEvents(runtime, runId));
    expect(state).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
    const [call] = Object.values(state.calls);
    expect(call).toMatchObject({ status: 'unknown', recovery: ['to_human'] });
    expect(resumptionSeqs(state)).toHaveLength(1);
    await runtime.approve(runId, state.pendingApprovalId!, { by: 'bob', resolution: 'retry' });
    await runtime.wait(runId);
    state = checkEverySeq(await wireEvents(runtime, runId));
    expect(Object.values(state.calls)[0]).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      recovery: ['to_human', 'human_retry'],
    });
    // A human's retry is not a resumption after a crash.
    expect(resumptionSeqs(state)).toHaveLength(1);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('tells a call run again after a timeout from one resumed after a crash', () => {
    const event = (seq: number, type: string, data: Record<string, unknown>) => ({
      run_id: 'r',
      seq,
      type,
      data,
      created_at: seq,
    });
    const state = foldEvents([
      event(1, 'action', { tool_call_id: 'c', tool: 't', args: {}, effect: 'idempotent', attempt: 1 }),
      event(2, 'result', { tool_call_id: 'c', tool: 't', status: 'unknown', ok: false, cause: 'timed_out' }),
      event(3, 'action', {
        tool_call_id: 'c',
        tool: 't',
        args: {},
        effect: 'idempotent',
        attempt: 2,
        recovery: 'rerun',
        cause: 'timed_out',
      }),
      event(4, 'result', { tool_call_id: 'c', tool: 't', status: 'succeeded', ok: true }),
    ]);
    expect(state.calls.c).toMatchObject({ status: 'succeeded', attempts: 2, recovery: ['rerun'] });
    expect(state.recoveries).toEqual([{ seq: 3, toolCallId: 'c', tool: 't', how: 'rerun', cause: 'timed_out' }]);
    expect(resumptionSeqs(state)).toEqual([]);
    expect(
      foldEvents([event(1, 'result', { tool_call_id: 'c', tool: 't', status: 'unknown', ok: false })]).calls.c?.status,
    ).toBe('unknown');
  });

  it('reads older logs whose usage is camelCase', () => {
    const state = foldEvents([
      { run_id: 'r', seq: 1, type: 'run.created', data: { input: 'x', limits: { maxSteps: 5 } }, created_at: 1 },
      { run_id: 'r', seq: 2, type: 'state', data: { from: 'pending', to: 'planning', step_index: 0 }, created_at: 2 },
      {
        run_id: 'r',
        seq: 3,
        type: 'step',
        data: {
          step_index: 0,
          decision: { type: 'final', answer: 'y' },
          usage: { inputTokens: 3, outputTokens: 4, costUsd: 0.5 },
        },
        created_at: 3,
      },
    ]);
    expect(state.usage).toEqual({ steps: 1, llmCalls: 1, toolCalls: 0, tokens: 7, costUsd: 0.5 });
    expect(state.answer).toBe('y');
  });

  it("keeps an approval pending through a variant's vote, and shows who voted", () => {
    const request = { approval_id: 'a', reason: 'approval', tool_calls: [{ id: 'c', tool: 'db.drop', args: {} }] };
    const state = foldEvents([
      { run_id: 'r', seq: 1, type: 'approval_request', data: request, created_at: 1 },
      {
        run_id: 'r',
        seq: 2,
        type: 'approval_result',
        data: { approval_id: 'a', decision: 'approved', by: 'alice', reason: null, final: false },
        created_at: 2,
      },
    ]);
    expect(state.approvals.a).toMatchObject({
      status: 'pending',
      decidedBy: null,
      votes: [{ by: 'alice', decision: 'approved', reason: null, seq: 2 }],
    });
    const decided = applyEvent(state, {
      run_id: 'r',
      seq: 3,
      type: 'approval_result',
      data: { approval_id: 'a', decision: 'approved', by: 'bob', reason: null, final: true },
      created_at: 3,
    });
    expect(decided.approvals.a).toMatchObject({ status: 'approved', decidedBy: 'bob', votes: [{ by: 'alice' }] });
  });
});
