/**
 * The inspector's fold on the human side, on the event logs of real runs: a question and its
 * answer, an edit and a response with what the decider gave, a budget wait with its limits and
 * the extension that raised them, a policy's escalation, and a wait an expiry handed to another
 * role. The fold must say what the runtime's own approvals say.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventJson } from '../../inspector/types.js';
import { foldEvents } from '../../inspector/fold.js';
import { askHuman, createScriptedPlanner, type Runtime } from '../../src/index.js';
import { toEventJson } from '../../src/server/index.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld } from '../helpers/world.js';

async function fold(runtime: Runtime, runId: string) {
  return foldEvents((await eventsOf(runtime, runId)).map((e) => toEventJson(e) as EventJson));
}

/** A runtime whose run asks (`ask`), sends through a high-risk tool (`send`) or reads twice (`read`). */
function humanRuntime() {
  const { db, effects } = tempFiles();
  const world = createWorld(effects, { risk: 'high' });
  const low = createWorld(effects);
  const unsafe = { ...world.unsafe, output: z.object({ value: z.string(), replayed: z.boolean() }) };
  return openRuntime({
    database: db,
    tools: [askHuman(), unsafe, low.read],
    planner: createScriptedPlanner((request) => {
      if (request.input === 'ask' && request.stepIndex === 0) {
        return { type: 'ask', question: 'How many copies?', schema: { type: 'integer', minimum: 1 } };
      }
      if (request.input.startsWith('send') && request.stepIndex === 0) {
        return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'to everyone' } }] };
      }
      if (request.input === 'read' && request.stepIndex < 2) {
        return { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: `v${request.stepIndex}` } }] };
      }
      return { type: 'final', answer: 'done' };
    }),
    policy: (request) =>
      request.context.escalate
        ? { decision: 'escalate', role: 'admin', reason: 'sends to everyone' }
        : request.defaultDecision,
  });
}

describe('event fold, the human side', () => {
  it('folds a question, its role and expiry, and the answer with who gave it', async () => {
    const runtime = humanRuntime();
    const run = await runtime.wait((await runtime.start({ input: 'ask', options: { expiresIn: 600_000 } })).id);
    const asked = await fold(runtime, run.id);
    const [row] = await runtime.approvals(run.id);
    expect(asked.approvals[asked.pendingApprovalId!]).toMatchObject({
      id: run.pendingInput!.id,
      reason: 'input',
      status: 'pending',
      role: 'approve',
      expiresAt: row!.expiresAt,
      question: { text: 'How many copies?', choices: null, schema: { type: 'integer', minimum: 1 } },
    });
    await runtime.answer(run.id, run.pendingInput!.id, { answer: 3, by: 'alice' });
    await runtime.wait(run.id);
    const done = await fold(runtime, run.id);
    expect(done.approvals[run.pendingInput!.id]).toMatchObject({
      status: 'approved',
      decidedBy: 'alice',
      action: 'answer',
      given: { answer: 3 },
    });
  });

  it('folds what an edit and a response gave', async () => {
    const runtime = humanRuntime();
    const edited = await runtime.wait((await runtime.start({ input: 'send' })).id);
    await runtime.decide(edited.id, edited.pendingApprovalId!, {
      decision: 'edit',
      by: 'alice',
      args: { value: 'to the team' },
    });
    await runtime.wait(edited.id);
    expect((await fold(runtime, edited.id)).approvals[edited.pendingApprovalId!]).toMatchObject({
      status: 'approved',
      action: 'edit',
      given: { edits: [{ tool_call_id: `${edited.id}.s0.c0`, args: { value: 'to the team' } }] },
      toolCalls: [{ args: { value: 'to everyone' } }],
    });
    const responded = await runtime.wait((await runtime.start({ input: 'send-2' })).id);
    const output = { value: 'by hand', replayed: false };
    await runtime.decide(responded.id, responded.pendingApprovalId!, { decision: 'respond', by: 'bob', output });
    await runtime.wait(responded.id);
    expect((await fold(runtime, responded.id)).approvals[responded.pendingApprovalId!]).toMatchObject({
      status: 'approved',
      decidedBy: 'bob',
      action: 'respond',
      given: { output },
    });
  });

  it('folds a budget wait with each limit, and the limits an extension raised', async () => {
    const runtime = humanRuntime();
    const options = { budget: { maxLlmCalls: 1 }, onBudgetExceeded: 'ask' as const };
    const run = await runtime.wait((await runtime.start({ input: 'read', options })).id);
    const waiting = await fold(runtime, run.id);
    const [row] = await runtime.approvals(run.id);
    const pending = waiting.approvals[run.pendingApprovalId!]!;
    expect(pending).toMatchObject({ reason: 'budget', budget: { budget: 'max_llm_calls', stepIndex: 1 } });
    expect(pending.budget!.limits).toEqual((row!.request as { limits: unknown[] }).limits);
    expect(waiting.limits).toMatchObject({ max_llm_calls: 1 });
    await runtime.decide(run.id, run.pendingApprovalId!, {
      decision: 'extend',
      by: 'alice',
      limits: { maxLlmCalls: 5 },
    });
    await runtime.wait(run.id);
    const done = await fold(runtime, run.id);
    expect(done).toMatchObject({ status: 'succeeded', limits: { max_llm_calls: 5 } });
    expect(done.approvals[run.pendingApprovalId!]).toMatchObject({
      action: 'extend',
      given: { limits: { max_llm_calls: 5 } },
    });
  });

  it("folds a policy's escalation, and the role an expiry handed a wait to", async () => {
    const runtime = humanRuntime();
    const policy = await runtime.wait((await runtime.start({ input: 'send', context: { escalate: true } })).id);
    expect((await fold(runtime, policy.id)).approvals[policy.pendingApprovalId!]).toMatchObject({
      reason: 'policy',
      role: 'admin',
      escalatedFrom: null,
      toolCalls: [{ reason: 'sends to everyone' }],
    });
    const options = { expiresIn: 200, onExpire: { escalate: 'admin' } };
    const expiring = await runtime.wait((await runtime.start({ input: 'send', options })).id);
    await waitUntil(async () => (await runtime.approvals(expiring.id))[0]!.role === 'admin', 'the escalation to admin');
    expect((await fold(runtime, expiring.id)).approvals[expiring.pendingApprovalId!]).toMatchObject({
      status: 'pending',
      role: 'admin',
      escalatedFrom: 'approve',
      expiresAt: null,
    });
  });
});
