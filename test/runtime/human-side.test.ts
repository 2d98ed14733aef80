/**
 * The human side of a run, in process and on both dialects: a question answered by a person,
 * edit-then-approve, respond as the tool, budgets that hand over to a person, policies that
 * escalate to a role, and waits that expire (after a restart too). Bad input changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askHuman,
  createScriptedPlanner,
  type PlannerRequest,
  type Runtime,
  type RuntimeOptions,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld, readEffects } from '../helpers/world.js';

/** The last message the planner was given: the observation of the step before. */
const lastMessage = (request: PlannerRequest) => request.messages.at(-1)!.content;

/** A run that asks one question and finishes with what it was told. */
function askSetup(database: string, schema?: Record<string, unknown>): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'ask', question: 'How many copies?', ...(schema ? { schema } : {}) }
        : { type: 'final', answer: `told: ${lastMessage(request)}` },
    ),
    tools: [askHuman()],
  };
}

/** A run that sends one value through a high-risk unsafe tool, then finishes with the observation. */
function sendSetup(database: string, effects: string, extra: Partial<RuntimeOptions> = {}): RuntimeOptions {
  const world = createWorld(effects, { risk: 'high' });
  return {
    database,
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'to everyone' } }] }
        : { type: 'final', answer: `final: ${lastMessage(request)}` },
    ),
    tools: [world.unsafe],
    ...extra,
  };
}

/** The run once it has ended (it may wait on the way: an expiry moves it on). */
async function waitForEnd(runtime: Runtime, runId: string) {
  await waitUntil(async () => ['succeeded', 'failed'].includes((await runtime.get(runId)).status), 'the run to end');
  return runtime.get(runId);
}

async function waiting(runtime: Runtime, input = 'x', options: Parameters<Runtime['start']>[0]['options'] = {}) {
  return runtime.wait((await runtime.start({ input, options })).id);
}

describe.each(ALL_DIALECTS)('the human side on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('asks a person a question, checks the answer against its schema, and goes on with it', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const options = askSetup(database, { type: 'integer', minimum: 1 });
    let runtime = openRuntime(options);
    const run = await waiting(runtime);
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'input' });
    expect(run.pendingInput).toMatchObject({
      id: run.pendingApprovalId,
      toolCallId: `${run.id}.s0.c0`,
      question: 'How many copies?',
      schema: { type: 'integer', minimum: 1 },
      role: 'approve',
    });
    const inputId = run.pendingInput!.id;
    await expect(runtime.answer(run.id, inputId, { answer: 0, by: 'alice' })).rejects.toMatchObject({
      code: 'input.invalid',
      failure: { details: { issues: [expect.objectContaining({ code: 'too_small' })] } },
    });
    await expect(runtime.approve(run.id, inputId, { by: 'alice' })).rejects.toMatchObject({
      code: 'approval.wrong_decision',
    });
    runtime = await restart(runtime, options);
    expect((await runtime.get(run.id)).pendingInput?.id).toBe(inputId);
    const answered = await runtime.answer(run.id, inputId, { answer: 3, by: 'alice' });
    expect(answered).toMatchObject({
      status: 'approved',
      resolution: 'answer',
      decidedBy: 'alice',
      answer: { answer: 3 },
    });
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toBe('told: Answer from alice:\n3');
    expect(done.pendingInput).toBeNull();
    await expect(runtime.answer(run.id, inputId, { answer: 4, by: 'bob' })).rejects.toMatchObject({
      code: 'approval.already_decided',
    });
    const types = (await eventsOf(runtime, run.id)).map((e) => e.type);
    expect(types).toContain('input_request');
    expect(types).toContain('input_result');
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({
      tool: 'human.ask',
      status: 'succeeded',
      result: { recordedBy: 'alice', given: 'answer' },
    });
  });

  it('runs a call once with the arguments a person edited, and keeps the proposed ones', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(sendSetup(database, effects));
    const run = await waiting(runtime);
    const approvalId = run.pendingApprovalId!;
    const before = (await runtime.approvals(run.id))[0]!;
    await expect(
      runtime.decide(run.id, approvalId, { decision: 'edit', by: 'alice', args: { value: 42 } }),
    ).rejects.toMatchObject({
      code: 'input.invalid',
      failure: { details: { issues: [expect.objectContaining({ path: ['value'] })] } },
    });
    expect((await runtime.approvals(run.id))[0]).toMatchObject({ status: 'pending', argsHash: before.argsHash });
    const edited = await runtime.decide(run.id, approvalId, {
      decision: 'edit',
      by: 'alice',
      // A key the tool's schema drops is not recorded as if the tool had been given it.
      args: { value: 'to the team', cc: 'everyone' },
      reason: 'narrower',
    });
    expect(edited).toMatchObject({ status: 'approved', resolution: 'edit' });
    expect(edited.argsHash).not.toBe(before.argsHash);
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(readEffects(effects).map((e) => e.value)).toEqual(['to the team']);
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({
      args: { value: 'to the team' },
      edited: { proposedArgs: { value: 'to everyone' }, by: 'alice', reason: 'narrower' },
    });
    expect(done.answer).toContain('alice edited the arguments before approving (narrower)');
  });

  it("refuses an edit of a tool that does not allow one, and records a person's response instead of running", async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const world = createWorld(effects, { risk: 'high' });
    const locked = {
      ...world.unsafe,
      allowEdit: false,
      output: z.object({ value: z.string(), replayed: z.boolean() }),
    };
    const runtime = openRuntime(sendSetup(database, effects, { tools: [locked] }));
    const run = await waiting(runtime);
    const approvalId = run.pendingApprovalId!;
    await expect(
      runtime.decide(run.id, approvalId, { decision: 'edit', by: 'alice', args: { value: 'y' } }),
    ).rejects.toMatchObject({ code: 'approval.edit_not_allowed' });
    await expect(
      runtime.decide(run.id, approvalId, { decision: 'respond', by: 'alice', output: { value: 1 } }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(runtime.decide(run.id, approvalId, { decision: 'bogus', by: 'alice' } as never)).rejects.toMatchObject(
      { code: 'input.invalid' },
    );
    await runtime.decide(run.id, approvalId, {
      decision: 'respond',
      by: 'alice',
      output: { value: 'sent by hand', replayed: false },
    });
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(readEffects(effects)).toEqual([]);
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({ status: 'succeeded', result: { recordedBy: 'alice', given: 'response' } });
    expect(done.answer).toContain('Not run: alice gave this result');
    expect(done.answer).toContain('sent by hand');
  });

  it('hands a budget that ran out to a person: extended it goes on, ended it fails', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const world = createWorld(effects);
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner((request) =>
        request.stepIndex < 2
          ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: `v${request.stepIndex}` } }] }
          : { type: 'final', answer: 'done' },
      ),
      tools: [world.read],
    });
    const options = { budget: { maxLlmCalls: 1 }, onBudgetExceeded: 'ask' as const };
    const run = await waiting(runtime, 'x', options);
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'budget' });
    const [wait] = await runtime.approvals(run.id);
    expect(wait).toMatchObject({
      kind: 'budget',
      status: 'pending',
      request: { budget: 'max_llm_calls', stepIndex: 1 },
    });
    expect(wait!.request).toMatchObject({
      limits: expect.arrayContaining([{ budget: 'max_llm_calls', limit: 1, used: 1 }]),
    });
    await expect(
      runtime.decide(run.id, wait!.id, { decision: 'extend', by: 'alice', limits: { maxLlmCalls: 0 } }),
    ).rejects.toMatchObject({ code: 'input.invalid', failure: { details: { key: 'maxLlmCalls', used: 1 } } });
    await expect(
      runtime.decide(run.id, wait!.id, { decision: 'extend', by: 'alice', limits: { maxTokens: 10_000 } }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    await runtime.decide(run.id, wait!.id, { decision: 'extend', by: 'alice', limits: { maxLlmCalls: 5 } });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', usage: { llmCalls: 3 } });

    const ended = await waiting(runtime, 'y', options);
    await runtime.decide(ended.id, ended.pendingApprovalId!, { decision: 'end', by: 'bob' });
    expect(await runtime.wait(ended.id)).toMatchObject({
      status: 'failed',
      stopReason: 'budget_exceeded',
      failure: { code: 'run.budget_exceeded' },
    });
  });

  it('hands the step limit and the tool-call budget to a person, counting the calls that ran', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const world = createWorld(effects);
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner((request) =>
        request.stepIndex < 3
          ? {
              type: 'tool_calls',
              calls: [
                { tool: 'world.idempotent', args: { value: `a${request.stepIndex}` } },
                { tool: 'world.idempotent', args: { value: `b${request.stepIndex}` } },
              ],
            }
          : { type: 'final', answer: 'done' },
      ),
      tools: [world.idempotent],
    });
    const calls = await waiting(runtime, 'calls', { budget: { maxToolCalls: 3 }, onBudgetExceeded: 'ask' });
    expect(calls).toMatchObject({ waitReason: 'budget', usage: { toolCalls: 3 } });
    const [callsWait] = await runtime.approvals(calls.id);
    expect(callsWait!.request).toMatchObject({ budget: 'max_tool_calls', stepIndex: 1 });
    await runtime.decide(calls.id, callsWait!.id, { decision: 'extend', by: 'alice', limits: { maxToolCalls: 10 } });
    expect(await runtime.wait(calls.id)).toMatchObject({ status: 'succeeded', usage: { toolCalls: 6 } });

    const steps = await waiting(runtime, 'steps', { maxSteps: 2, onBudgetExceeded: 'ask' });
    expect(steps).toMatchObject({ waitReason: 'budget' });
    const [stepsWait] = await runtime.approvals(steps.id);
    expect(stepsWait!.request).toMatchObject({ budget: 'max_steps', stepIndex: 2 });
    await expect(
      runtime.decide(steps.id, stepsWait!.id, { decision: 'extend', by: 'alice', limits: { maxSteps: 2 } }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    await runtime.decide(steps.id, stepsWait!.id, { decision: 'extend', by: 'alice', limits: { maxSteps: 4 } });
    expect(await runtime.wait(steps.id)).toMatchObject({ status: 'succeeded' });
    // Each call ran once whatever the waits: the idempotency keys say so.
    const keys = readEffects(effects).map((e) => e.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(12);
  });

  it('expires a question the way its tool says: no answer in time is told to the model', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({
      ...askSetup(database),
      tools: [askHuman({ expiresIn: 100 })],
    });
    const run = await runtime.start({ input: 'q' });
    const done = await runtime.wait(run.id);
    // Left alone past its expiry: woken at the instant, the call fails and the model goes on.
    const final = done.status === 'waiting_human' ? await waitForEnd(runtime, run.id) : done;
    expect(final.status).toBe('succeeded');
    expect(final.answer).toContain('did not answer the question');
    const [wait] = await runtime.approvals(run.id);
    expect(wait).toMatchObject({ kind: 'input', status: 'expired', resolution: 'reject', decidedBy: 'baton:expiry' });
  });

  it('hands the deadline to a person: the run waits past it, across a restart, until given more time', async () => {
    const { database } = await freshDatabaseOf(dialect);
    let slow = true;
    const options: RuntimeOptions = {
      database,
      planner: createScriptedPlanner(async (request) => {
        // The first plan takes until it is aborted: the deadline passes while the run plans.
        if (slow) await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
        return { type: 'final', answer: 'in time after all' };
      }),
      tools: [],
    };
    let runtime = openRuntime(options);
    const run = await waiting(runtime, 'x', { budget: { timeoutMs: 200 }, onBudgetExceeded: 'ask' });
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'budget' });
    const [wait] = await runtime.approvals(run.id);
    expect(wait).toMatchObject({ kind: 'budget', request: { budget: 'timeout' } });
    slow = false;
    runtime = await restart(runtime, options);
    // Past its deadline and loaded again: it still waits for the person, and is not failed by it.
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'waiting_human', waitReason: 'budget' });
    await expect(
      runtime.decide(run.id, wait!.id, { decision: 'extend', by: 'alice', limits: { maxLlmCalls: 3 } }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    await runtime.decide(run.id, wait!.id, { decision: 'extend', by: 'alice', limits: { timeoutMs: 60_000 } });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'in time after all' });
    expect(done.deadlineAt).toBeGreaterThan(wait!.createdAt + 30_000);
  });

  it('times out a run whose deadline passed before it left pending (its creation took longer than its budget)', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const planner = createScriptedPlanner(async (request) => {
      await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
      return { type: 'final', answer: 'never' };
    });
    const runtime = openRuntime({ database, planner, tools: [] });
    // 1 ms: gone before the creation commit lands, so the deadline actor starts with it passed.
    const failed = await waiting(runtime, 'x', { budget: { timeoutMs: 1 } });
    expect(failed).toMatchObject({ status: 'failed', stopReason: 'timeout' });
    const asked = await waiting(runtime, 'y', { budget: { timeoutMs: 1 }, onBudgetExceeded: 'ask' });
    expect(asked).toMatchObject({ status: 'waiting_human', waitReason: 'budget' });
  });

  it('escalates a call to the role a policy names', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(
      sendSetup(database, effects, {
        policy: () => ({ decision: 'escalate', role: 'admin', reason: 'sends mail to everyone' }),
      }),
    );
    const run = await waiting(runtime);
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'policy' });
    const [approval] = await runtime.approvals(run.id);
    expect(approval).toMatchObject({
      kind: 'policy',
      role: 'admin',
      request: { kind: 'policy', reason: 'sends mail to everyone' },
    });
    await runtime.approve(run.id, approval!.id, { by: 'root' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('expires a wait at its stored instant after a restart: reject tells the model, end fails the run', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = sendSetup(database, effects);
    let runtime = openRuntime(options);
    const rejected = await waiting(runtime, 'r', { expiresIn: 300 });
    const ended = await waiting(runtime, 'e', { expiresIn: 300, onExpire: 'end' });
    const escalated = await waiting(runtime, 's', { expiresIn: 300, onExpire: { escalate: 'admin' } });
    const [first] = await runtime.approvals(rejected.id);
    expect(first!.expiresAt).toBeGreaterThan(first!.createdAt);
    await runtime.close();
    // Closed past the instant: the next runtime wakes the runs and applies each expiry.
    await waitUntil(() => Date.now() > first!.expiresAt! + 50, 'the expiry instant to pass');
    runtime = await restart(runtime, options);
    expect(await runtime.wait(rejected.id)).toMatchObject({ status: 'succeeded' });
    expect((await runtime.wait(rejected.id)).answer).toContain('rejected');
    expect(await runtime.wait(ended.id)).toMatchObject({
      status: 'failed',
      stopReason: 'expired',
      failure: { code: 'approval.expired' },
    });
    await expect(runtime.approve(ended.id, ended.pendingApprovalId!, { by: 'late' })).rejects.toMatchObject({
      code: 'approval.expired',
    });
    await waitUntil(
      async () => (await runtime.approvals(escalated.id))[0]!.role === 'admin',
      'the escalation to admin',
    );
    const [handed] = await runtime.approvals(escalated.id);
    expect(handed).toMatchObject({ status: 'pending', role: 'admin', expiresAt: null });
    await runtime.approve(escalated.id, handed!.id, { by: 'root' });
    expect((await runtime.wait(escalated.id)).status).toBe('succeeded');
    expect(readEffects(effects).map((e) => e.value)).toEqual(['to everyone']);
  });
});
