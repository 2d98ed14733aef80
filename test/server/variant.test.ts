/** A service serving a machine variant: its machine is what `/v1/machine` draws, and votes reach the API. */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { twoApprovers } from '../fixtures/two-approvers.js';
import { apiClient, startTestServer, token } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + scaled(60_000);
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a server driving a machine variant', () => {
  it('describes the variant and takes two approvers for a destructive call over HTTP', async () => {
    let dropped = 0;
    const server = await startTestServer({
      runtime: () => ({
        machine: twoApprovers,
        planner: createScriptedPlanner([
          { type: 'tool_calls', calls: [{ tool: 'db.drop', args: { table: 't' } }] },
          { type: 'final', answer: 'dropped' },
        ]),
        tools: [
          defineTool({
            name: 'db.drop',
            description: 'Drop a table',
            input: z.object({ table: z.string() }),
            effect: 'idempotent',
            risk: 'destructive',
            execute: () => (dropped += 1),
          }),
        ],
        policy: ({ tool }) => (tool.risk === 'destructive' ? 'needs_approval' : undefined),
      }),
    });
    const viewer = apiClient(server.url, token('acme-view'));
    const machine = await viewer('GET', '/v1/machine');
    expect(machine.body).toMatchObject({ name: 'two-approvers', version: 1 });
    expect(Object.keys(machine.body.states.waiting_human.states)).toEqual(['first_approval', 'second_approval']);

    const submit = apiClient(server.url, token('acme-submit'));
    const created = await submit('POST', '/v1/runs', { input: 'drop t' });
    expect(created.status).toBe(201);
    const runId = created.body.id as string;
    const waiting = await until(
      () => viewer('GET', `/v1/runs/${runId}`),
      (r) => r.body.status === 'waiting_human',
    );
    const approvalPath = `/v1/runs/${runId}/approvals/${waiting.body.pending_approval_id}`;

    const alice = apiClient(server.url, token('acme-approve'));
    const vote = await alice('POST', approvalPath, { decision: 'approve', reason: 'checked' });
    expect(vote.status).toBe(200);
    expect(vote.body).toMatchObject({
      status: 'pending',
      decided_by: null,
      votes: [{ by: 'alice', decision: 'approved', reason: 'checked', at: expect.any(Number) }],
    });
    const again = await alice('POST', approvalPath, { decision: 'approve' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'approval.refused', kind: 'user' });
    expect(dropped).toBe(0);

    const admin = apiClient(server.url, token('acme-admin'));
    const decided = await admin('POST', approvalPath, { decision: 'approve' });
    expect(decided.body).toMatchObject({ status: 'approved', decided_by: 'acme-admin', votes: [{ by: 'alice' }] });
    const done = await until(
      () => viewer('GET', `/v1/runs/${runId}`),
      (r) => r.body.status === 'succeeded',
    );
    expect(done.body.answer).toBe('dropped');
    expect(dropped).toBe(1);
    const listed = await viewer('GET', `/v1/runs/${runId}/approvals`);
    expect(listed.body.approvals ?? listed.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ votes: [expect.objectContaining({ by: 'alice' })] })]),
    );
  });
});
