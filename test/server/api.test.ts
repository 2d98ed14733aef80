import { describe, expect, it } from 'vitest';
import { RUN_STATUSES } from '../../src/index.js';
import { createServer } from '../../src/server/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { createServerAgent } from '../helpers/server-agent.js';
import { apiClient, startTestServer, token } from '../helpers/server.js';
import { tempFiles } from '../helpers/temp.js';
import { readEffects } from '../helpers/world.js';

const SUBMIT = token('acme-submit');
const ADMIN = token('acme-admin');

describe('the run API', () => {
  it('starts a run with 201 and answers it in snake_case, with its steps, tool calls and trace', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, ADMIN);
    const created = await call('POST', '/v1/runs', {
      input: 'write:1',
      session_id: 'support-1',
      context: { user_id: 'u1', scope: ['notes'] },
      options: { max_steps: 5, budget: { max_tool_calls: 3, timeout_ms: 60_000 } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      input: 'write:1',
      session_id: 'support-1',
      tenant_id: 'acme',
      context: { user_id: 'u1', tenant_id: 'acme', scope: ['notes'] },
      usage: { steps: 0, llm_calls: 0, tool_calls: 0 },
    });
    expect(RUN_STATUSES).toContain(created.body.status);
    const id = created.body.id as string;
    await server.runtime.wait(id);

    const run = await call('GET', `/v1/runs/${id}`);
    expect(run.body).toMatchObject({ id, status: 'succeeded', answer: 'wrote 1', stop_reason: null });
    expect(run.body.deadline_at).toBeGreaterThan(run.body.created_at);

    const steps = await call('GET', `/v1/runs/${id}/steps`);
    expect(steps.body.steps).toHaveLength(2);
    expect(steps.body.steps[0]).toMatchObject({ step_index: 0, decision: { type: 'tool_calls' } });
    expect(steps.body.steps[0].usage).toHaveProperty('input_tokens');

    const calls = await call('GET', `/v1/runs/${id}/tool-calls`);
    expect(calls.body.tool_calls).toEqual([
      expect.objectContaining({
        id: `${id}.s0.c0`,
        step_index: 0,
        call_index: 0,
        tool: 'notes.write',
        effect: 'idempotent',
        status: 'succeeded',
        args: { value: `${id}#0` },
      }),
    ]);

    const trace = await call('GET', `/v1/runs/${id}/trace`);
    expect(trace.body.run).toMatchObject({ id, session_id: 'support-1' });
    expect(trace.body.spans.some((s: { kind: string }) => s.kind === 'tool')).toBe(true);
    expect(trace.body.spans[0]).toHaveProperty('duration_ms');
  });

  it('answers with ?wait=true once the run has ended or waits for a human', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const done = await call('POST', '/v1/runs?wait=true', { input: 'write:2' });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ status: 'succeeded', answer: 'wrote 2' });
    const waiting = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    expect(waiting.body).toMatchObject({ status: 'waiting_human', wait_reason: 'approval' });
    expect(waiting.body.pending_approval_id).toEqual(expect.any(String));
  });

  it('answers ?wait=true with the run as it is after the wait limit, or when the server closes', async () => {
    const server = await startTestServer({ limits: { waitTimeoutMs: 100 } });
    const call = apiClient(server.url, SUBMIT);
    const limited = await call('POST', '/v1/runs?wait=true', { input: 'write:1:3000', session_id: 'a' });
    expect(limited.status).toBe(201);
    expect(['planning', 'executing']).toContain(limited.body.status);
    const slow = await startTestServer({ limits: { waitTimeoutMs: 60_000 } });
    const pending = apiClient(slow.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'write:1:3000' });
    await expect.poll(async () => (await slow.runtime.list()).runs.length).toBe(1);
    const closing = slow.close();
    const answered = await pending;
    expect(answered.status).toBe(201);
    expect(answered.body.status).not.toBe('succeeded');
    await closing;
  });

  it('returns the existing run for a repeated idempotency key', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const body = { input: 'hello', options: { idempotency_key: 'order-42' } };
    const first = await call('POST', '/v1/runs', body);
    const second = await call('POST', '/v1/runs', body);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.idempotency_key).toBe('order-42');
    const list = await call('GET', '/v1/runs');
    expect(list.body.runs).toHaveLength(1);
  });

  it('answers 409 session.busy with the active run id when the session has an active run', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const active = await call('POST', '/v1/runs?wait=true', { input: 'mail', session_id: 's1' });
    expect(active.body.status).toBe('waiting_human');
    const busy = await call('POST', '/v1/runs', { input: 'hello', session_id: 's1' });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({
      code: 'session.busy',
      kind: 'user',
      details: { session_id: 's1', active_run_id: active.body.id },
    });
    expect(busy.body.error.message).not.toContain('acme:');
    expect((await call('POST', '/v1/runs', { input: 'hello', session_id: 's2' })).status).toBe(201);
  });

  it('queues a run of a busy session with options.on_busy: listed as queued, cancellable, run in turn', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const active = await call('POST', '/v1/runs?wait=true', { input: 'mail', session_id: 's1' });
    expect(active.body.status).toBe('waiting_human');
    const queued = await call('POST', '/v1/runs', {
      input: 'hello',
      session_id: 's1',
      options: { on_busy: 'enqueue' },
    });
    expect(queued.status).toBe(201);
    expect(queued.body).toMatchObject({ status: 'queued', session_id: 's1' });
    const dropped = await call('POST', '/v1/runs', { input: 'hi', session_id: 's1', options: { on_busy: 'enqueue' } });
    const listed = await call('GET', '/v1/runs?status=queued');
    expect(listed.body.runs.map((r: { id: string }) => r.id)).toEqual([dropped.body.id, queued.body.id]);
    const cancelled = await call('POST', `/v1/runs/${dropped.body.id}/cancel`, { reason: 'sent twice' });
    expect(cancelled.body).toMatchObject({ status: 'failed', stop_reason: 'cancelled' });
    for (const options of [{ on_busy: 'later' }, { on_busy: 'enqueue', interrupt: { compensate: true } }]) {
      const bad = await call('POST', '/v1/runs', { input: 'x', session_id: 's1', options });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('input.invalid');
    }
    // The interrupting run cancels the active one and goes before the one queued earlier.
    const now = await call('POST', '/v1/runs', {
      input: 'hello',
      session_id: 's1',
      options: { on_busy: 'interrupt', interrupt: { reason: 'new message' } },
    });
    expect(now.status).toBe(201);
    expect((await server.runtime.get(active.body.id as string)).stopReason).toBe('cancelled');
    expect((await server.runtime.wait(now.body.id as string)).status).toBe('succeeded');
    expect((await server.runtime.wait(queued.body.id as string)).status).toBe('succeeded');
    expect((await call('GET', '/v1/runs?status=queued')).body.runs).toEqual([]);
  });

  it('lists runs by status and session, newest first, page by page', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await call('POST', '/v1/runs?wait=true', { input: 'hello', session_id: i < 3 ? 'a' : 'b' })).body.id);
    }
    const page1 = await call('GET', '/v1/runs?limit=2');
    expect(page1.body.runs.map((r: { id: string }) => r.id)).toEqual([ids[4], ids[3]]);
    const page2 = await call('GET', `/v1/runs?limit=2&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
    expect(page2.body.runs.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const bySession = await call('GET', '/v1/runs?session_id=b&status=succeeded');
    expect(bySession.body.runs.map((r: { id: string }) => r.id)).toEqual([ids[4], ids[3]]);
    expect(bySession.body.runs[0].session_id).toBe('b');
    expect((await call('GET', '/v1/runs?status=&session_id=&limit=3')).body.runs).toHaveLength(3);
    const bad = await call('GET', '/v1/runs?status=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('input.invalid');
  });

  it('cancels a run, and answers 409 when it has already ended', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const run = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    const cancelled = await call('POST', `/v1/runs/${run.body.id}/cancel`, { reason: 'no longer needed' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'failed', stop_reason: 'cancelled' });
    const again = await call('POST', `/v1/runs/${run.body.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('run.invalid_transition');
  });

  it('pauses a run before its next step and resumes it, answering 409 for what it cannot pause or resume', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const run = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    expect(run.body).toMatchObject({ wait_reason: 'approval', pause_requested: null });
    const asked = await call('POST', `/v1/runs/${run.body.id}/pause`, { reason: 'audit' });
    expect(asked.status).toBe(200);
    // The operator is the caller; the pause is reached once the wait is over and the step has run.
    expect(asked.body).toMatchObject({
      status: 'waiting_human',
      pause_requested: { reason: 'audit', by: 'acme-bot' },
    });
    const approved = await apiClient(server.url, ADMIN)(
      'POST',
      `/v1/runs/${run.body.id}/approvals/${run.body.pending_approval_id}`,
      {
        decision: 'approve',
      },
    );
    expect(approved.status).toBe(200);
    await server.runtime.wait(run.body.id);
    const paused = await call('GET', `/v1/runs/${run.body.id}`);
    expect(paused.body).toMatchObject({ status: 'waiting_human', wait_reason: 'paused', pause_requested: null });
    const wait = (await call('GET', `/v1/runs/${run.body.id}/approvals`)).body.approvals.at(-1);
    expect(wait).toMatchObject({
      kind: 'pause',
      role: 'submit',
      request: { kind: 'pause', reason: 'audit', by: 'acme-bot', resume: 'planning' },
    });
    const twice = await call('POST', `/v1/runs/${run.body.id}/pause`);
    expect([twice.status, twice.body.error.code]).toEqual([409, 'run.invalid_transition']);
    const unknownField = await call('POST', `/v1/runs/${run.body.id}/resume`, { by: 'someone else' });
    expect([unknownField.status, unknownField.body.error.code]).toEqual([400, 'input.invalid']);
    const viewer = await apiClient(server.url, token('acme-view'))('POST', `/v1/runs/${run.body.id}/resume`);
    expect(viewer.status).toBe(403);
    const resumed = await call('POST', `/v1/runs/${run.body.id}/resume`, { reason: 'audit done' });
    expect(resumed.status).toBe(200);
    expect((await server.runtime.wait(run.body.id)).status).toBe('succeeded');
    const again = await call('POST', `/v1/runs/${run.body.id}/resume`);
    expect([again.status, again.body.error.code]).toEqual([409, 'run.invalid_transition']);
    const missing = await call('POST', '/v1/runs/run_nope/pause');
    expect(missing.status).toBe(404);
  });

  it('starts runs with metadata and tags and lists them by those, by failure code and by creation time', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const made: string[] = [];
    for (const [i, customer] of ['acme-1', 'acme-2', 'acme-1'].entries()) {
      const created = await call('POST', '/v1/runs?wait=true', {
        input: `write:${i}`,
        metadata: { customer, attempt: i, vip: i === 2 },
        tags: i === 1 ? ['nightly'] : ['nightly', 'billing'],
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ metadata: { customer, attempt: i, vip: i === 2 } });
      made.push(created.body.id as string);
    }
    const list = async (query: string) => {
      const page = await call('GET', `/v1/runs?${query}`);
      expect(page.status, query).toBe(200);
      return (page.body.runs as { id: string }[]).map((run) => run.id);
    };
    expect(await list('metadata.customer=acme-1')).toEqual([made[2], made[0]]);
    expect(await list('metadata.customer=acme-1&metadata.vip=true')).toEqual([made[2]]);
    expect(await list('tag=nightly&tag=billing')).toEqual([made[2], made[0]]);
    expect(await list('tag=nightly&metadata.attempt=1&status=succeeded')).toEqual([made[1]]);
    expect(await list('failure_code=tool.failed')).toEqual([]);
    const second = (await call('GET', `/v1/runs/${made[1]}`)).body.created_at as number;
    expect(await list(`created_after=${second}&tag=nightly`)).toEqual([made[2], made[1]]);
    expect(await list(`created_before=${new Date(second).toISOString()}`)).toEqual([made[0]]);
    // Another tenant's runs are not found by the same metadata.
    const other = await apiClient(server.url, token('globex-admin'))('GET', '/v1/runs?metadata.customer=acme-1');
    expect(other.body.runs).toEqual([]);
    for (const [query, code] of [
      ['metadata.bad%20key=x', 'input.invalid'],
      ['tag=has%20space', 'input.invalid'],
      ['created_after=yesterday', 'input.invalid'],
      ['failure_code=nope', 'input.invalid'],
    ] as const) {
      const refused = await call('GET', `/v1/runs?${query}`);
      expect([refused.status, refused.body.error.code], query).toEqual([400, code]);
    }
    for (const query of ['tags=nightly', 'meta.customer=acme', 'metadata.customer=acme-1&metadata.customer=acme-2']) {
      const refused = await call('GET', `/v1/runs?${query}`);
      expect([refused.status, refused.body.error.code], query).toEqual([400, 'input.invalid']);
    }
    // An empty value is a value: only the runs that have it (none here), not every run.
    expect(await list('metadata.customer=')).toEqual([]);
    expect(await list('tag=&status=')).toHaveLength(3);
    const tooBig = await call('POST', '/v1/runs', { input: 'x', metadata: { blob: 'x'.repeat(300) } });
    expect([tooBig.status, tooBig.body.error.code]).toEqual([400, 'input.invalid']);
    const notScalar = await call('POST', '/v1/runs', { input: 'x', metadata: { deep: { a: 1 } } });
    expect([notScalar.status, notScalar.body.error.code]).toEqual([400, 'input.invalid']);
    // Refused starts created nothing.
    expect(await list('limit=10')).toEqual([...made].reverse());
  });

  it('serves the machine definition and a health check', async () => {
    const server = await startTestServer();
    const machine = await apiClient(server.url, token('acme-view'))('GET', '/v1/machine');
    expect(machine.status).toBe(200);
    expect(Object.keys(machine.body.states)).toEqual(expect.arrayContaining(['planning', 'waiting_human']));
    const health = await apiClient(server.url)('GET', '/healthz');
    expect(health).toMatchObject({ status: 200, body: { status: 'ok', stalled_runs: 0 } });
  });
});

describe('request errors', () => {
  it('answers an unknown route with 404 JSON', async () => {
    const server = await startTestServer();
    const reply = await apiClient(server.url, ADMIN)('GET', '/v1/nothing-here');
    expect(reply.status).toBe(404);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body.error).toMatchObject({ code: 'route.not_found', kind: 'user' });
    expect((await apiClient(server.url)('GET', '/nope')).body.error.code).toBe('route.not_found');
    expect((await apiClient(server.url, ADMIN)('DELETE', '/v1/runs')).status).toBe(404);
  });

  it('answers a missing run with 404 run.not_found', async () => {
    const server = await startTestServer();
    const reply = await apiClient(server.url, ADMIN)('GET', '/v1/runs/run_missing');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      error: { code: 'run.not_found', kind: 'user', message: "Run 'run_missing' does not exist" },
    });
  });

  it('answers malformed JSON with 400 input.invalid', async () => {
    const server = await startTestServer();
    const reply = await apiClient(server.url, SUBMIT)('POST', '/v1/runs', '{"input": "hello",');
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'input.invalid', kind: 'user' });
    expect(reply.body.error.message).toMatch(/not valid JSON/);
  });

  it('answers a schema violation with 400 and the zod issues', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const reply = await call('POST', '/v1/runs', { input: '', options: { maxSteps: 3 } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('input.invalid');
    const paths = reply.body.error.details.issues.map((i: { path: string[] }) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['input', 'options']));
    const decision = await apiClient(server.url, ADMIN)('POST', '/v1/runs/run_x/approvals/apr_x', {
      decision: 'maybe',
    });
    expect(decision.status).toBe(404);
  });

  it('answers a body over the limit with 413, with or without a Content-Length', async () => {
    const server = await startTestServer({ limits: { bodyBytes: 1024 } });
    const call = apiClient(server.url, SUBMIT);
    const reply = await call('POST', '/v1/runs', { input: 'x'.repeat(2000) });
    expect(reply.status).toBe(413);
    expect(reply.body.error).toMatchObject({ code: 'request.too_large', details: { limit_bytes: 1024 } });
    const chunked = await fetch(`${server.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SUBMIT}`, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ input: 'y'.repeat(4000) })));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await call('POST', '/v1/runs', { input: 'hello' })).status).toBe(201);
  });
});

describe('the app in process', () => {
  it('answers app.request() without a listening socket', async () => {
    const { db, effects } = tempFiles();
    const agent = createServerAgent(effects);
    const runtime = openRuntime({ database: db, planner: agent.planner, tools: agent.tools });
    const { app } = createServer({ runtime, auth: { tokens: [] } });
    const created = await app.request('/v1/runs?wait=true', {
      method: 'POST',
      body: JSON.stringify({ input: 'hello' }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ status: 'succeeded', answer: 'hi', tenant_id: 'default' });
    const missing = await app.request('/v1/runs/run_nope');
    expect(await missing.json()).toMatchObject({ error: { code: 'run.not_found' } });
  });

  it('takes a client that goes away mid-body as request.aborted, not as an unexpected error', async () => {
    const { db, effects } = tempFiles();
    const agent = createServerAgent(effects);
    const runtime = openRuntime({ database: db, planner: agent.planner, tools: agent.tools });
    const unexpected: unknown[] = [];
    const { app } = createServer({ runtime, auth: { tokens: [] }, onError: (error) => unexpected.push(error) });
    // What @hono/node-server's request body does when the socket closes mid-body: node's 'aborted'.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"input": "hel'));
        controller.error(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      },
    });
    const reply = await app.request('/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(reply.status).toBe(400);
    expect(await reply.json()).toMatchObject({ error: { code: 'request.aborted' } });
    expect(unexpected).toEqual([]);
    expect((await runtime.list()).runs).toEqual([]);
  });
});

describe('bad input found by trying Baton as a new user', () => {
  it('answers a body nested past the depth limit with 400, not 500', async () => {
    const server = await startTestServer();
    let context: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 4100; i += 1) context = { a: context };
    const reply = await apiClient(server.url, SUBMIT)('POST', '/v1/runs', JSON.stringify({ input: 'hello', context }));
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'input.invalid', details: { limit: 32 } });
    expect((await apiClient(server.url, ADMIN)('GET', '/v1/runs')).body.runs).toEqual([]);
  });

  it('answers a cursor no page gave with 400, not an empty page', async () => {
    const server = await startTestServer();
    const reply = await apiClient(server.url, ADMIN)('GET', '/v1/runs?cursor=bogus');
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/Invalid cursor 'bogus'/);
  });

  it('refuses a resolution on an ordinary approval and runs nothing', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, ADMIN);
    const run = (await call('POST', '/v1/runs?wait=true', { input: 'mail' })).body;
    const reply = await call('POST', `/v1/runs/${run.id}/approvals/${run.pending_approval_id}`, {
      decision: 'approve',
      resolution: 'done',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/applies only to an uncertain side effect/);
    expect((await call('GET', `/v1/runs/${run.id}`)).body.status).toBe('waiting_human');
    expect(readEffects(server.effects)).toEqual([]);
    const approved = await call('POST', `/v1/runs/${run.id}/approvals/${run.pending_approval_id}`, {
      decision: 'approve',
    });
    expect(approved.body).toMatchObject({ status: 'approved', resolution: null });
  });

  it('answers an invalid Last-Event-ID on the stream of every run with 400', async () => {
    const server = await startTestServer();
    const reply = await apiClient(server.url, ADMIN)('GET', '/v1/events', undefined, { 'last-event-id': 'abc' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('input.invalid');
  });

  it('answers a reused idempotency key with a different request with 409; the same request gets the same run', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const body = { input: 'hello', session_id: 's1', options: { idempotency_key: 'k-1', max_steps: 5 } };
    const first = await call('POST', '/v1/runs', body);
    expect(first.status).toBe(201);
    const again = await call('POST', '/v1/runs', {
      options: { max_steps: 5, idempotency_key: 'k-1' },
      session_id: 's1',
      input: 'hello',
    });
    expect(again.body.id).toBe(first.body.id);
    for (const [changed, difference] of [
      [{ ...body, input: 'hello again' }, 'input'],
      [{ ...body, session_id: 's2' }, 'session'],
      [{ ...body, options: { ...body.options, max_steps: 6 } }, 'options'],
      [{ ...body, context: { scope: ['x'] } }, 'context'],
    ] as const) {
      const reply = await call('POST', '/v1/runs', changed);
      expect(reply.status, difference).toBe(409);
      expect(reply.body.error).toMatchObject({
        code: 'idempotency.mismatch',
        details: { run_id: first.body.id, differences: [difference] },
      });
    }
    expect((await apiClient(server.url, ADMIN)('GET', '/v1/runs')).body.runs).toHaveLength(1);
  });

  it('names ids in error messages as the client sent them, never as stored with the tenant, and cuts long ones', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    const body = { input: 'hello', options: { idempotency_key: 'k-1', max_steps: 5 } };
    const first = await call('POST', '/v1/runs', body);
    const mismatch = await call('POST', '/v1/runs', { ...body, input: 'hello again' });
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.error.message).toBe(
      `Idempotency key 'k-1' belongs to run '${first.body.id}', started with another input`,
    );

    const long = 'r'.repeat(5_000);
    const view = apiClient(server.url, ADMIN);
    const cut = `'${'r'.repeat(79)}…'`;
    const missingRun = await view('GET', `/v1/runs/${long}`);
    expect(missingRun.status).toBe(404);
    expect(missingRun.body.error.message).toBe(`Run ${cut} does not exist`);
    const missingApproval = await view('POST', `/v1/runs/${first.body.id}/approvals/${'a'.repeat(5_000)}`, {
      decision: 'approve',
    });
    expect(missingApproval.status).toBe(404);
    expect(missingApproval.body.error.message).toBe(
      `Approval '${'a'.repeat(79)}…' does not exist on run '${first.body.id}'`,
    );
    const missingArtifact = await view('GET', `/v1/runs/${first.body.id}/artifacts/${'f'.repeat(5_000)}`);
    expect(missingArtifact.status).toBe(404);
    expect(missingArtifact.body.error.message).toBe(`Run '${first.body.id}' has no artifact '${'f'.repeat(79)}…'`);
  });
});
