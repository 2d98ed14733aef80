/**
 * Forks and reruns over HTTP, against a real server on loopback: `POST /v1/runs/{id}/fork`
 * (201 with the fork, `forked_from` on the run and its `run.created`, the copies in the ledger),
 * `GET /v1/runs?forked_from=`, tenants and roles, bad bodies refused with nothing written, a
 * repeated effect's wait as the API shows it, and `POST /v1/reruns` after a model outage
 * (dry run, then the forks, then nothing more).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { toStatus } from '../../src/server/http-error.js';
import { createFailure } from '../../src/failure.js';
import { scaled } from '../helpers/limits.js';
import { outageAgent, type Outage } from '../helpers/outage.js';
import { apiClient, pollRun, startTestServer, token, type Json } from '../helpers/server.js';

const SUBMIT = token('acme-submit');
const VIEW = token('acme-view');
const APPROVE = token('acme-approve');
const GLOBEX = token('globex-admin');

async function outageServer() {
  const outage: Outage = { down: false, planned: [], lookups: [] };
  const server = await startTestServer({ runtime: () => outageAgent(outage) });
  return { server, outage, call: apiClient(server.url, SUBMIT) };
}

const settled = (r: Json) => r.status === 'succeeded' || r.status === 'failed' || r.status === 'waiting_human';

describe('forks over HTTP', () => {
  it('POST /v1/runs/{id}/fork answers 201 with the fork; the run, its list and its ledger say where it came from', async () => {
    const { server, outage, call } = await outageServer();
    const created = await call('POST', '/v1/runs?wait=true', { input: 'q1' });
    expect(created.body.status).toBe('succeeded');
    const source = created.body.id as string;
    const fork = await call('POST', `/v1/runs/${source}/fork`, { at_step: 1 });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({ forked_from: { run_id: source, step: 1 }, tenant_id: 'acme' });
    const done = await pollRun(call, fork.body.id, settled, scaled(30_000));
    expect(done).toMatchObject({
      status: 'succeeded',
      answer: 'answered: q1',
      forked_from: { run_id: source, step: 1 },
    });
    expect(outage.lookups.filter((id) => id === fork.body.id)).toEqual([]);
    expect((await call('GET', `/v1/runs/${source}`)).body.forked_from).toBeNull();
    const listed = await call('GET', `/v1/runs?forked_from=${source}`);
    expect(listed.body.runs.map((r: Json) => r.id)).toEqual([fork.body.id]);
    const calls = (await call('GET', `/v1/runs/${fork.body.id}/tool-calls`)).body.tool_calls as Json[];
    expect(calls).toEqual([
      expect.objectContaining({
        tool: 'notes.lookup',
        copied_from: `${source}.s0.c0`,
        idempotency_key: `${source}.s0.c0`,
        status: 'succeeded',
      }),
    ]);
    const exported = (await call('GET', `/v1/runs/${fork.body.id}/export`)).body;
    expect(exported.events[0]).toMatchObject({
      type: 'run.created',
      data: { forked_from: { run_id: source, step: 1 }, by: 'acme-bot' },
    });
    void server;
  });

  it('refuses bad forks with typed errors, other tenants with 404 and viewers with 403, and writes nothing', async () => {
    const { call, server } = await outageServer();
    const source = (await call('POST', '/v1/runs?wait=true', { input: 'q1' })).body.id as string;
    const path = `/v1/runs/${source}/fork`;
    const expectError = async (reply: Promise<{ status: number; body: Json }>, status: number, code: string) => {
      const answered = await reply;
      expect(answered.status, JSON.stringify(answered.body)).toBe(status);
      expect(answered.body.error.code).toBe(code);
      return answered.body.error;
    };
    expect((await expectError(call('POST', path, { at_step: 5 }), 400, 'input.invalid')).details).toEqual({
      at_step: 5,
      last_step: 1,
    });
    expect((await expectError(call('POST', path, { at_step: -1 }), 400, 'input.invalid')).details).toEqual({
      at_step: -1,
      last_step: 1,
    });
    await expectError(
      call('POST', path, { at_step: 1, decision: { type: 'final', answer: 'x', zzz: 1 } }),
      400,
      'input.invalid',
    );
    await expectError(call('POST', path, { at_step: 1, input: 'other' }), 400, 'input.invalid');
    await expectError(call('POST', path, { at_step: 0, nonsense: true }), 400, 'input.invalid');
    await expectError(call('POST', path, '{"at_step": 0'), 400, 'input.invalid');
    const issues = await expectError(
      call('POST', path, { at_step: 0, decision: { type: 'tool_calls', calls: [{ tool: 'notes.lookup', args: {} }] } }),
      400,
      'input.invalid',
    );
    expect(issues.details.issues).toEqual([expect.objectContaining({ path: ['decision', 'calls', 0, 'args', 'key'] })]);
    await expectError(
      call('POST', path, { at_step: 0, decision: { type: 'tool_calls', calls: [{ tool: 'rm', args: {} }] } }),
      400,
      'input.invalid',
    );
    await expectError(apiClient(server.url, GLOBEX)('POST', path, { at_step: 0 }), 404, 'run.not_found');
    await expectError(apiClient(server.url, VIEW)('POST', path, { at_step: 0 }), 403, 'auth.forbidden');
    await expectError(call('POST', '/v1/runs/run_missing/fork', { at_step: 0 }), 404, 'run.not_found');
    expect((await call('GET', `/v1/runs?forked_from=${source}`)).body.runs).toEqual([]);
    // A copied call of a tool the agent no longer has is a conflict naming it.
    expect(toStatus(createFailure('fork.tool_missing', 'x'))).toBe(409);
    // The same key answers the same fork; another fork under that key is a mismatch.
    const first = await call('POST', path, { at_step: 1, options: { idempotency_key: 'k1' } });
    const again = await call('POST', path, { at_step: 1, options: { idempotency_key: 'k1' } });
    expect(again.body.id).toBe(first.body.id);
    await expectError(
      call('POST', path, { at_step: 0, options: { idempotency_key: 'k1' } }),
      409,
      'idempotency.mismatch',
    );
  });

  it('shows a repeated effect as a repeat wait and takes its decisions', async () => {
    let charged = 0;
    const charge = defineTool({
      name: 'shop.charge',
      description: 'Charge',
      input: z.object({ amount: z.number() }),
      effect: 'unsafe',
      risk: 'low',
      execute: ({ amount }) => {
        charged += 1;
        return { charged: amount };
      },
    });
    const server = await startTestServer({
      runtime: () => ({
        planner: createScriptedPlanner([
          { type: 'tool_calls', calls: [{ tool: 'shop.charge', args: { amount: 5 } }] },
          { type: 'final', answer: 'done' },
        ]),
        tools: [charge],
      }),
    });
    const call = apiClient(server.url, SUBMIT);
    const source = (await call('POST', '/v1/runs?wait=true', { input: 'pay' })).body.id as string;
    const fork = (await call('POST', `/v1/runs/${source}/fork`, { at_step: 0 })).body.id as string;
    const waiting = await pollRun(call, fork, settled, scaled(30_000));
    expect(waiting).toMatchObject({ status: 'waiting_human', wait_reason: 'repeat_effect' });
    const approvals = (await call('GET', `/v1/runs/${fork}/approvals`)).body.approvals as Json[];
    expect(approvals[0]).toMatchObject({
      kind: 'repeat',
      request: {
        kind: 'repeat',
        source: {
          run_id: source,
          tool_call_id: `${source}.s0.c0`,
          tool: 'shop.charge',
          status: 'succeeded',
          result: expect.objectContaining({ status: 'ok', content: { charged: 5 }, duration_ms: expect.any(Number) }),
        },
      },
    });
    const decided = await apiClient(server.url, APPROVE)('POST', `/v1/runs/${fork}/approvals/${approvals[0].id}`, {
      decision: 'approve',
      resolution: 'done',
    });
    expect(decided.status).toBe(200);
    expect((await pollRun(call, fork, settled, scaled(30_000))).status).toBe('succeeded');
    expect(charged).toBe(1);
  });
});

describe('POST /v1/reruns', () => {
  it('forks the runs a model outage failed at the step that failed; a dry run forks none, a second rerun none', async () => {
    const { call, outage, server } = await outageServer();
    outage.down = true;
    const failed: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const run = (await call('POST', '/v1/runs?wait=true', { input: `q${i}` })).body;
      expect(run).toMatchObject({ status: 'failed', failure: { code: 'planner.unavailable' } });
      failed.push(run.id);
    }
    outage.down = false;
    // A run that succeeded is no rerun's.
    expect((await call('POST', '/v1/runs?wait=true', { input: 'ok later' })).body.status).toBe('succeeded');
    const dry = await call('POST', '/v1/reruns', { failure_code: 'planner.unavailable', dry_run: true });
    expect(dry.body).toMatchObject({ dry_run: true, matched: 5, created: 0, existing: 0, failed: [] });
    expect(dry.body.reruns.every((r: Json) => r.run_id === null && r.at_step === 1)).toBe(true);
    const rerun = await call('POST', '/v1/reruns', { failure_code: 'planner.unavailable' });
    expect(rerun.body).toMatchObject({ dry_run: false, matched: 5, created: 5, existing: 0 });
    expect(rerun.body.reruns.map((r: Json) => r.source_run_id).sort()).toEqual([...failed].sort());
    for (const entry of rerun.body.reruns as Json[]) {
      const fork = await pollRun(call, entry.run_id, settled, scaled(30_000));
      expect(fork).toMatchObject({ status: 'succeeded', forked_from: { run_id: entry.source_run_id, step: 1 } });
      expect(outage.planned.filter((p) => p.runId === entry.run_id).map((p) => p.step)).toEqual([1]);
    }
    const again = await call('POST', '/v1/reruns', { failure_code: 'planner.unavailable' });
    expect(again.body).toMatchObject({ matched: 5, created: 0, existing: 5 });
    // Another tenant reruns only its own runs: none.
    expect((await apiClient(server.url, GLOBEX)('POST', '/v1/reruns', { status: 'failed' })).body).toMatchObject({
      matched: 0,
    });
    expect((await apiClient(server.url, VIEW)('POST', '/v1/reruns', { status: 'failed' })).status).toBe(403);
    expect((await call('POST', '/v1/reruns', { status: 'waiting_human' })).status).toBe(400);
    // A rerun names the runs it forks (or is a dry run): an empty body forks nothing.
    for (const body of [{}, undefined]) {
      const bare = await call('POST', '/v1/reruns', body);
      expect(bare.status).toBe(400);
      expect(bare.body.error.code).toBe('input.invalid');
    }

    // Forks that fail again are not rerun by the next rerun: it makes nothing more.
    outage.down = true;
    const more = (await call('POST', '/v1/runs?wait=true', { input: 'q-late' })).body.id as string;
    const third = await call('POST', '/v1/reruns', { failure_code: 'planner.unavailable' });
    expect(third.body).toMatchObject({ matched: 6, created: 1, existing: 5 });
    const late = (third.body.reruns as Json[]).find((r) => r.source_run_id === more)!;
    expect(await pollRun(call, late.run_id, settled, scaled(30_000))).toMatchObject({ status: 'failed' });
    const fourth = await call('POST', '/v1/reruns', { failure_code: 'planner.unavailable' });
    expect(fourth.body).toMatchObject({ matched: 6, created: 0, existing: 6 });
  });
});
