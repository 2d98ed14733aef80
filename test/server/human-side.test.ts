/**
 * The human side over HTTP, against a real server on loopback: a question answered through
 * `/inputs`, edit-then-approve, respond as the tool, a budget extended or ended, a policy's
 * escalation to `admin`, and waits that expire (ended, or escalated). Each bad request is a 400
 * or 409 with its failure code and changes nothing; roles and tenants are checked as for approvals.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askHuman, createScriptedPlanner, type PlannerRequest, type RuntimeOptions } from '../../src/index.js';
import {
  apiClient,
  pollRun,
  startTestServer,
  TEST_AUTH,
  token,
  type Json,
  type TestServer,
} from '../helpers/server.js';
import { parseAuthConfig, type AuthConfig } from '../../src/server/index.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld, readEffects } from '../helpers/world.js';

const SUBMIT = token('acme-submit');
const APPROVE = token('acme-approve');
const VIEW = token('acme-view');
const ADMIN = token('acme-admin');
const GLOBEX = token('globex-admin');

const lastMessage = (request: PlannerRequest) => request.messages.at(-1)!.content;

/**
 * A server whose runs do what their input says: `ask` asks how many copies (a whole number of
 * at least 1), `send` sends one value through a high-risk unsafe tool, `read` reads twice;
 * each then answers with what it was last told.
 */
async function humanServer(
  extra: (effects: string) => Partial<RuntimeOptions> = () => ({}),
  auth: AuthConfig = TEST_AUTH,
): Promise<TestServer> {
  return startTestServer({
    auth,
    runtime: (effects) => {
      const risky = createWorld(effects, { risk: 'high' });
      const safe = createWorld(effects);
      return {
        planner: createScriptedPlanner((request) => {
          const step = request.stepIndex;
          if (request.input === 'ask' && step === 0) {
            return { type: 'ask', question: 'How many copies?', schema: { type: 'integer', minimum: 1 } };
          }
          if (request.input === 'send' && step === 0) {
            return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'to everyone' } }] };
          }
          if (request.input === 'read' && step < 2) {
            return { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: `v${step}` } }] };
          }
          return { type: 'final', answer: `told: ${lastMessage(request)}` };
        }),
        tools: [askHuman(), risky.unsafe, safe.read],
        ...extra(effects),
      };
    },
  });
}

/** Starts a run with `input` (and `options`) and answers it once it waits or ends. */
async function started(server: TestServer, input: string, options?: Record<string, unknown>): Promise<Json> {
  const reply = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', {
    input,
    ...(options ? { options } : {}),
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body;
}

const decisionPath = (run: Json, id = run.pending_approval_id as string) => `/v1/runs/${run.id}/approvals/${id}`;
const approvalsOf = async (server: TestServer, runId: string) =>
  (await apiClient(server.url, VIEW)('GET', `/v1/runs/${runId}/approvals`)).body.approvals as Json[];
const settled = (server: TestServer, runId: string) =>
  pollRun(apiClient(server.url, VIEW), runId, (r) => r.status === 'succeeded' || r.status === 'failed');
const sent = (server: TestServer) => readEffects(server.effects).filter((e) => e.tool === 'world.unsafe');

describe('the human side over HTTP', () => {
  it('answers a question through /inputs: a bad answer is 400 with its issues, a second one 409', async () => {
    const server = await humanServer();
    const approver = apiClient(server.url, APPROVE);
    const run = await started(server, 'ask');
    expect(run).toMatchObject({ status: 'waiting_human', wait_reason: 'input' });
    const pendingInput = {
      id: run.pending_approval_id,
      tool_call_id: `${run.id}.s0.c0`,
      question: 'How many copies?',
      choices: null,
      schema: { type: 'integer', minimum: 1 },
      role: 'approve',
      expires_at: null,
      // A model's question (human.ask): no tool asks it.
      from: null,
    };
    expect(run.pending_input).toEqual(pendingInput);
    // The same shape wherever a run appears.
    expect((await approver('GET', `/v1/runs/${run.id}`)).body.pending_input).toEqual(pendingInput);
    const listed = (await approver('GET', '/v1/runs')).body.runs as Json[];
    expect(listed.find((r) => r.id === run.id)?.pending_input).toEqual(pendingInput);
    const inputPath = `/v1/runs/${run.id}/inputs/${pendingInput.id as string}`;

    const bad = await approver('POST', inputPath, { answer: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: 'input.invalid',
      details: { issues: [expect.objectContaining({ code: 'too_small' })] },
    });
    expect((await approver('POST', inputPath, {})).status).toBe(400);
    expect((await approver('POST', inputPath, { answer: 3, by: 'mallory' })).status).toBe(400);
    // An approval's decision does not answer a question.
    const approved = await approver('POST', decisionPath(run), { decision: 'approve' });
    expect(approved.status).toBe(409);
    expect(approved.body.error.code).toBe('approval.wrong_decision');
    expect((await apiClient(server.url, VIEW)('POST', inputPath, { answer: 3 })).status).toBe(403);
    expect((await apiClient(server.url, GLOBEX)('POST', inputPath, { answer: 3 })).status).toBe(404);
    expect((await approver('POST', `/v1/runs/${run.id}/inputs/nope`, { answer: 3 })).body.error.code).toBe(
      'approval.not_found',
    );
    const [before] = await approvalsOf(server, run.id);
    expect(before).toMatchObject({
      status: 'pending',
      kind: 'input',
      role: 'approve',
      request: { kind: 'input', question: 'How many copies?', choices: null, schema: { type: 'integer', minimum: 1 } },
      answer: null,
    });

    const answered = await approver('POST', inputPath, { answer: 3, reason: 'the usual' });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body).toMatchObject({
      id: pendingInput.id,
      status: 'approved',
      resolution: 'answer',
      decided_by: 'alice',
      reason: 'the usual',
      answer: { answer: 3 },
    });
    const again = await apiClient(server.url, ADMIN)('POST', inputPath, { answer: 4 });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('approval.already_decided');
    const done = await settled(server, run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'told: Answer from alice:\n3', pending_input: null });
    const calls = (await approver('GET', `/v1/runs/${run.id}/tool-calls`)).body.tool_calls as Json[];
    expect(calls).toEqual([
      expect.objectContaining({
        tool: 'human.ask',
        status: 'succeeded',
        edited: null,
        result: expect.objectContaining({ content: 3, given: 'answer', recorded_by: 'alice' }),
      }),
    ]);
  });

  it('runs a call once with the arguments a person edited; a failing edit is 400 and changes nothing', async () => {
    const server = await humanServer();
    const approver = apiClient(server.url, APPROVE);
    const run = await started(server, 'send');
    const path = decisionPath(run);
    const [before] = await approvalsOf(server, run.id);
    expect(before).toMatchObject({ kind: 'tool', role: 'approve', request: null, expires_at: null, on_expire: null });

    const misfit = await approver('POST', path, { decision: 'edit', args: { value: 42 } });
    expect(misfit.status).toBe(400);
    expect(misfit.body.error).toMatchObject({
      code: 'input.invalid',
      details: { issues: [expect.objectContaining({ path: ['value'] })] },
    });
    const stranger = await approver('POST', path, { decision: 'edit', args: { value: 'x' }, tool_call_id: 'c9' });
    expect(stranger.status).toBe(400);
    // Fields that do not go with the decision, or a decision without what it needs.
    for (const [body, field] of [
      [{ decision: 'edit' }, 'args'],
      [{ decision: 'approve', args: { value: 'x' } }, 'args'],
      [{ decision: 'edit', args: { value: 'x' }, output: 1 }, 'output'],
      [{ decision: 'respond', args: { value: 'x' } }, 'args'],
      [{ decision: 'reject', limits: { max_steps: 3 } }, 'limits'],
    ] as const) {
      const reply = await approver('POST', path, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(
        reply.body.error.details.issues.map((i: Json) => i.path[0]),
        JSON.stringify(body),
      ).toContain(field);
    }
    // A step's approval is no question.
    const asInput = await approver('POST', `/v1/runs/${run.id}/inputs/${run.pending_approval_id}`, { answer: 'yes' });
    expect(asInput.status).toBe(409);
    expect(asInput.body.error.code).toBe('approval.wrong_decision');
    const unknown = await approver('POST', path, { decision: 'bogus' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'input.invalid', details: { issues: [{ path: ['decision'] }] } });
    expect((await approvalsOf(server, run.id))[0]).toEqual(before);

    const edited = await approver('POST', path, {
      decision: 'edit',
      args: { value: 'to the team' },
      reason: 'narrower',
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body).toMatchObject({
      status: 'approved',
      resolution: 'edit',
      decided_by: 'alice',
      answer: { edits: [{ tool_call_id: `${run.id}.s0.c0`, args: { value: 'to the team' } }] },
    });
    expect(edited.body.args_hash).not.toBe(before.args_hash);
    expect(await settled(server, run.id)).toMatchObject({ status: 'succeeded' });
    expect(sent(server).map((e) => e.value)).toEqual(['to the team']);
    const [call] = (await approver('GET', `/v1/runs/${run.id}/tool-calls`)).body.tool_calls as Json[];
    expect(call).toMatchObject({
      args: { value: 'to the team' },
      edited: { proposed_args: { value: 'to everyone' }, by: 'alice', reason: 'narrower' },
    });
  });

  it('refuses an edit of a tool that allows none (409) and takes a response that fits its output instead', async () => {
    const server = await humanServer((effects) => ({
      tools: [
        {
          ...createWorld(effects, { risk: 'high' }).unsafe,
          allowEdit: false,
          output: z.object({ value: z.string(), replayed: z.boolean() }),
        },
      ],
    }));
    const approver = apiClient(server.url, APPROVE);
    const run = await started(server, 'send');
    const path = decisionPath(run);
    const locked = await approver('POST', path, { decision: 'edit', args: { value: 'y' } });
    expect(locked.status).toBe(409);
    expect(locked.body.error.code).toBe('approval.edit_not_allowed');
    const misfit = await approver('POST', path, { decision: 'respond', output: { value: 1 } });
    expect(misfit.status).toBe(400);
    expect(misfit.body.error).toMatchObject({ code: 'input.invalid', details: { issues: expect.any(Array) } });
    expect((await approvalsOf(server, run.id))[0]!.status).toBe('pending');

    const output = { value: 'sent by hand', replayed: false };
    const responded = await approver('POST', path, { decision: 'respond', output });
    expect(responded.status, JSON.stringify(responded.body)).toBe(200);
    expect(responded.body).toMatchObject({
      status: 'approved',
      resolution: 'respond',
      answer: { tool_call_id: `${run.id}.s0.c0`, output },
    });
    const done = await settled(server, run.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toContain('sent by hand');
    expect(sent(server)).toEqual([]);
    const [call] = (await approver('GET', `/v1/runs/${run.id}/tool-calls`)).body.tool_calls as Json[];
    expect(call).toMatchObject({
      status: 'succeeded',
      result: { content: output, given: 'response', recorded_by: 'alice' },
    });
  });

  it('hands a budget that ran out to a person: lower than used is 400, extended it goes on, ended it fails', async () => {
    const server = await humanServer();
    const approver = apiClient(server.url, APPROVE);
    const options = { budget: { max_llm_calls: 1 }, on_budget_exceeded: 'ask' };
    const run = await started(server, 'read', options);
    expect(run).toMatchObject({ status: 'waiting_human', wait_reason: 'budget', pending_input: null });
    const [wait] = await approvalsOf(server, run.id);
    expect(wait).toMatchObject({
      id: run.pending_approval_id,
      kind: 'budget',
      status: 'pending',
      role: 'approve',
      request: { kind: 'budget', budget: 'max_llm_calls', step_index: 1 },
    });
    expect(wait!.request.limits).toContainEqual({ budget: 'max_llm_calls', limit: 1, used: 1 });
    const path = decisionPath(run);

    const lower = await approver('POST', path, { decision: 'extend', limits: { max_llm_calls: 0 } });
    expect(lower.status).toBe(400);
    // Told in the body's terms.
    expect(lower.body.error).toMatchObject({
      code: 'input.invalid',
      details: { key: 'max_llm_calls', limit: 0, used: 1 },
    });
    expect(lower.body.error.message).toContain("'max_llm_calls'");
    const beside = await approver('POST', path, { decision: 'extend', limits: { max_tokens: 10_000 } });
    expect(beside.status).toBe(400);
    expect(beside.body.error.message).toContain("'max_llm_calls'");
    for (const body of [
      { decision: 'extend', limits: {} },
      { decision: 'extend', limits: { max_llm_calls: -1 } },
      { decision: 'extend', limits: { max_llm_calls: 5, max_words: 3 } },
      { decision: 'extend' },
    ]) {
      expect((await approver('POST', path, body)).status, JSON.stringify(body)).toBe(400);
    }
    const approve = await approver('POST', path, { decision: 'approve' });
    expect(approve.status).toBe(409);
    expect(approve.body.error.code).toBe('approval.wrong_decision');
    expect((await approvalsOf(server, run.id))[0]).toEqual(wait);

    const extended = await approver('POST', path, { decision: 'extend', limits: { max_llm_calls: 5 } });
    expect(extended.status, JSON.stringify(extended.body)).toBe(200);
    expect(extended.body).toMatchObject({
      status: 'approved',
      resolution: 'extend',
      answer: { limits: { max_llm_calls: 5 } },
    });
    expect(await settled(server, run.id)).toMatchObject({ status: 'succeeded', usage: { llm_calls: 3 } });

    const ended = await started(server, 'read', options);
    const end = await apiClient(server.url, ADMIN)('POST', decisionPath(ended), { decision: 'end', reason: 'enough' });
    expect(end.status, JSON.stringify(end.body)).toBe(200);
    expect(end.body).toMatchObject({ status: 'rejected', resolution: 'end', decided_by: 'acme-admin' });
    expect(await settled(server, ended.id)).toMatchObject({
      status: 'failed',
      stop_reason: 'budget_exceeded',
      failure: { code: 'run.budget_exceeded' },
    });
  });

  it("escalates a call to the role a policy names: an approver's token is 403, an admin's decides", async () => {
    const server = await humanServer(() => ({
      policy: () => ({ decision: 'escalate', role: 'admin', reason: 'sends mail to everyone' }),
    }));
    const run = await started(server, 'send');
    expect(run).toMatchObject({ status: 'waiting_human', wait_reason: 'policy' });
    const [wait] = await approvalsOf(server, run.id);
    expect(wait).toMatchObject({
      kind: 'policy',
      role: 'admin',
      request: { kind: 'policy', reason: 'sends mail to everyone' },
    });
    const path = decisionPath(run);
    for (const decision of [{ decision: 'approve' }, { decision: 'edit', args: { value: 'x' } }]) {
      const refused = await apiClient(server.url, APPROVE)('POST', path, decision);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'auth.forbidden', details: { required_role: 'admin' } });
    }
    // Another tenant's admin does not see the run at all.
    expect((await apiClient(server.url, GLOBEX)('POST', path, { decision: 'approve' })).status).toBe(404);
    expect((await approvalsOf(server, run.id))[0]).toEqual(wait);
    expect(sent(server)).toEqual([]);

    const approved = await apiClient(server.url, ADMIN)('POST', path, { decision: 'approve' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: 'acme-admin' });
    expect(await settled(server, run.id)).toMatchObject({ status: 'succeeded' });
    expect(sent(server)).toHaveLength(1);
  });

  it("lets a token with a role of the deployment's own decide what a policy escalated to that role", async () => {
    const finance = { token: token('acme-finance'), tenant: 'acme', roles: ['approve', 'finance'], name: 'fiona' };
    const auth = parseAuthConfig({ roles: ['finance'], tokens: [...TEST_AUTH.tokens, finance] });
    // A role the file does not declare is refused (a misspelt 'aprove' is not a new role).
    expect(() => parseAuthConfig({ tokens: [...TEST_AUTH.tokens, finance] })).toThrow(/finance/);
    expect(() => parseAuthConfig({ roles: ['Finance!'], tokens: [] })).toThrow(/roles/);
    const server = await humanServer(() => ({ policy: () => ({ decision: 'escalate', role: 'finance' }) }), auth);
    const run = await started(server, 'send');
    const path = decisionPath(run);
    const refused = await apiClient(server.url, APPROVE)('POST', path, { decision: 'approve' });
    expect(refused.body.error).toMatchObject({ code: 'auth.forbidden', details: { required_role: 'finance' } });
    const approved = await apiClient(server.url, finance.token)('POST', path, { decision: 'approve' });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: 'fiona' });
    expect(await settled(server, run.id)).toMatchObject({ status: 'succeeded' });
  });

  it('expires a wait at its instant: a decision after it is 409 approval.expired, an escalation goes to admin', async () => {
    const server = await humanServer();
    const approver = apiClient(server.url, APPROVE);
    for (const options of [{ on_expire: 'later' }, { expires_in: 0 }, { on_expire: { escalate: '' } }]) {
      const refused = await apiClient(server.url, SUBMIT)('POST', '/v1/runs', { input: 'send', options });
      expect(refused.status, JSON.stringify(options)).toBe(400);
    }
    const ended = await started(server, 'send', { expires_in: 400, on_expire: 'end' });
    const [wait] = await approvalsOf(server, ended.id);
    expect(wait).toMatchObject({ on_expire: { outcome: 'end' } });
    expect(wait!.expires_at).toBeGreaterThan(wait!.created_at);
    await waitUntil(() => Date.now() > wait!.expires_at + 20, 'the expiry instant to pass');
    const late = await approver('POST', decisionPath(ended, wait!.id), { decision: 'approve' });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('approval.expired');
    expect(await settled(server, ended.id)).toMatchObject({
      status: 'failed',
      stop_reason: 'expired',
      failure: { code: 'approval.expired' },
    });

    // A question expires the same way, and its route answers 409 too.
    const asked = await started(server, 'ask', { expires_in: 400, on_expire: 'end' });
    const question = asked.pending_input;
    expect(question.expires_at).toBeGreaterThan(asked.created_at);
    await waitUntil(() => Date.now() > question.expires_at + 20, 'the question to expire');
    const lateAnswer = await approver('POST', `/v1/runs/${asked.id}/inputs/${question.id}`, { answer: 3 });
    expect(lateAnswer.status).toBe(409);
    expect(lateAnswer.body.error.code).toBe('approval.expired');
    expect(await settled(server, asked.id)).toMatchObject({ status: 'failed', stop_reason: 'expired' });

    const escalated = await started(server, 'send', { expires_in: 400, on_expire: { escalate: 'admin' } });
    const [first] = await approvalsOf(server, escalated.id);
    expect(first).toMatchObject({ role: 'approve', on_expire: { outcome: 'escalate', role: 'admin' } });
    await waitUntil(
      async () => (await approvalsOf(server, escalated.id))[0]!.role === 'admin',
      'the escalation to admin',
    );
    const [handed] = await approvalsOf(server, escalated.id);
    expect(handed).toMatchObject({ status: 'pending', role: 'admin', expires_at: null, on_expire: null });
    const refused = await approver('POST', decisionPath(escalated, handed!.id), { decision: 'approve' });
    expect(refused.status).toBe(403);
    const approved = await apiClient(server.url, ADMIN)('POST', decisionPath(escalated, handed!.id), {
      decision: 'approve',
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(await settled(server, escalated.id)).toMatchObject({ status: 'succeeded' });
    expect(sent(server).map((e) => e.value)).toEqual(['to everyone']);
  });
});
