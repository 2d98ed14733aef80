import { describe, expect, it } from 'vitest';
import { apiClient, startTestServer, token, type TestServer } from '../helpers/server.js';
import { readEffects } from '../helpers/world.js';

const SUBMIT = token('acme-submit');
const APPROVE = token('acme-approve');
const ADMIN = token('acme-admin');

async function waitingRun(server: TestServer) {
  const run = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'mail' });
  expect(run.body.status).toBe('waiting_human');
  return { id: run.body.id as string, path: `/v1/runs/${run.body.id}/approvals/${run.body.pending_approval_id}` };
}

const mails = (server: TestServer) => readEffects(server.effects).filter((e) => e.tool === 'mail.send');

describe('approvals over HTTP', () => {
  it('runs the approved call once; a second decision answers 409 approval.already_decided and runs nothing', async () => {
    const server = await startTestServer();
    const { id, path } = await waitingRun(server);
    const approver = apiClient(server.url, APPROVE);
    const first = await approver('POST', path, { decision: 'approve' });
    expect(first.status).toBe(200);
    expect((await server.runtime.wait(id)).status).toBe('succeeded');
    for (const body of [{ decision: 'approve' }, { decision: 'reject', reason: 'too late' }]) {
      const again = await apiClient(server.url, ADMIN)('POST', path, body);
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({
        code: 'approval.already_decided',
        kind: 'user',
        details: { status: 'approved', decided_by: 'alice' },
      });
    }
    expect(mails(server)).toHaveLength(1);
    const listed = await approver('GET', `/v1/runs/${id}/approvals`);
    expect(listed.body.approvals).toEqual([expect.objectContaining({ status: 'approved', decided_by: 'alice' })]);
  });

  it('lets exactly one of five concurrent decisions through', async () => {
    const server = await startTestServer();
    const { id, path } = await waitingRun(server);
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => apiClient(server.url, APPROVE)('POST', path, { decision: 'approve' })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect((await server.runtime.wait(id)).status).toBe('succeeded');
    expect(mails(server)).toHaveLength(1);
  });

  it('tells the model of a rejection, or ends the run with terminate', async () => {
    const server = await startTestServer();
    const approver = apiClient(server.url, APPROVE);
    const told = await waitingRun(server);
    expect((await approver('POST', told.path, { decision: 'reject', reason: 'not today' })).body).toMatchObject({
      status: 'rejected',
      reason: 'not today',
      decided_by: 'alice',
    });
    const answered = await server.runtime.wait(told.id);
    expect(answered.status).toBe('succeeded');
    expect(answered.answer).toContain('policy.denied');
    const ended = await waitingRun(server);
    await approver('POST', ended.path, { decision: 'reject', terminate: true });
    expect(await server.runtime.wait(ended.id)).toMatchObject({ status: 'failed', stopReason: 'rejected' });
    expect(mails(server)).toEqual([]);
  });

  it('answers 404 for an unknown approval and 400 for a malformed decision', async () => {
    const server = await startTestServer();
    const { id, path } = await waitingRun(server);
    const approver = apiClient(server.url, APPROVE);
    const missing = await approver('POST', `/v1/runs/${id}/approvals/apr_missing`, { decision: 'approve' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('approval.not_found');
    const bad = await approver('POST', path, { decision: 'approve', terminate: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toEqual(['terminate']);
    expect((await approver('POST', path, { decision: 'yes' })).status).toBe(400);
    expect((await approver('POST', path)).status).toBe(400);
    expect((await server.runtime.get(id)).status).toBe('waiting_human');
  });
});
