import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { createServer, loadAuthConfig } from '../../src/server/index.js';
import { connectSse } from '../helpers/sse-client.js';
import { createServerAgent } from '../helpers/server-agent.js';
import { apiClient, startTestServer, TEST_AUTH, token } from '../helpers/server.js';
import { tempFiles } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { readEffects } from '../helpers/world.js';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';

const ACME_SUBMIT = token('acme-submit');
const ACME_APPROVE = token('acme-approve');
const ACME_VIEW = token('acme-view');
const ACME_ADMIN = token('acme-admin');
const GLOBEX = token('globex-admin');

describe('authentication', () => {
  it('answers 401 without a token or with an unknown one, and never on /healthz', async () => {
    const server = await startTestServer();
    const none = await apiClient(server.url)('GET', '/v1/runs');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.body.error).toMatchObject({ code: 'auth.required', kind: 'user' });
    expect((await apiClient(server.url, 'tok_wrong_0123456789abcdef')('GET', '/v1/runs')).status).toBe(401);
    expect((await apiClient(server.url)('GET', '/v1/runs', undefined, { authorization: 'Basic abc' })).status).toBe(
      401,
    );
    expect((await apiClient(server.url)('GET', `/v1/runs?token=${ACME_ADMIN}`)).status).toBe(401);
    expect((await apiClient(server.url)('GET', '/healthz')).status).toBe(200);
  });

  it('checks roles: submit to start, view to read, approve to decide (admin does all)', async () => {
    const server = await startTestServer();
    const viewer = apiClient(server.url, ACME_VIEW);
    const refused = await viewer('POST', '/v1/runs', { input: 'hello' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'auth.forbidden',
      kind: 'policy',
      details: { required_role: 'submit' },
    });
    const run = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'mail' });
    expect((await viewer('GET', `/v1/runs/${run.body.id}`)).status).toBe(200);
    expect((await viewer('POST', `/v1/runs/${run.body.id}/cancel`)).status).toBe(403);
    expect((await apiClient(server.url, ACME_APPROVE)('POST', '/v1/runs', { input: 'hello' })).status).toBe(403);
    expect((await apiClient(server.url, ACME_ADMIN)('POST', '/v1/runs', { input: 'hello' })).status).toBe(201);
  });

  it('refuses to decide an approval without the approve role, and records the approver by token name', async () => {
    const server = await startTestServer();
    const run = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'mail' });
    const path = `/v1/runs/${run.body.id}/approvals/${run.body.pending_approval_id}`;
    for (const bearer of [ACME_SUBMIT, ACME_VIEW]) {
      const reply = await apiClient(server.url, bearer)('POST', path, { decision: 'approve' });
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('auth.forbidden');
    }
    expect(readEffects(server.effects)).toEqual([]);
    const approved = await apiClient(server.url, ACME_APPROVE)('POST', path, { decision: 'approve', reason: 'ok' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: 'alice', reason: 'ok' });
    expect((await server.runtime.wait(run.body.id)).status).toBe('succeeded');
    expect((await server.runtime.approvals(run.body.id))[0]).toMatchObject({ decidedBy: 'alice' });
  });

  it('forces the tenant of a new run to the caller’s, and keeps a token to its scopes', async () => {
    const server = await startTestServer({
      auth: {
        tokens: [
          { token: ACME_SUBMIT, tenant: 'acme', roles: ['submit', 'view'], name: 'bot', scope: ['notes', 'mail'] },
        ],
      },
    });
    const call = apiClient(server.url, ACME_SUBMIT);
    const run = await call('POST', '/v1/runs', {
      input: 'hello',
      context: { tenant_id: 'globex', user_id: 'u1', submitted_by: 'the-boss' },
    });
    expect(run.status).toBe(201);
    // The client names its user; who really asked is the token's name, whatever the body says.
    expect(run.body).toMatchObject({
      tenant_id: 'acme',
      context: { tenant_id: 'acme', user_id: 'u1', submitted_by: 'bot', scope: ['notes', 'mail'] },
    });
    expect((await server.runtime.get(run.body.id)).tenantId).toBe('acme');
    const wide = await call('POST', '/v1/runs', { input: 'hello', context: { scope: ['notes', 'billing'] } });
    expect(wide.status).toBe(403);
    expect(wide.body.error.message).toContain('billing');
  });
});

describe('tenancy', () => {
  it('answers 404 for another tenant’s run on every read, stream, decision and cancel', async () => {
    const server = await startTestServer();
    const acme = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'mail' });
    const id = acme.body.id as string;
    const globex = apiClient(server.url, GLOBEX);
    for (const path of ['', '/steps', '/tool-calls', '/trace', '/approvals', '/events']) {
      const reply = await globex('GET', `/v1/runs/${id}${path}`);
      expect(reply.status, path).toBe(404);
      expect(reply.body.error, path).toEqual({
        code: 'run.not_found',
        kind: 'user',
        message: `Run '${id}' does not exist`,
      });
    }
    const decision = await globex('POST', `/v1/runs/${id}/approvals/${acme.body.pending_approval_id}`, {
      decision: 'approve',
    });
    expect(decision.status).toBe(404);
    expect((await globex('POST', `/v1/runs/${id}/cancel`)).status).toBe(404);
    const list = await globex('GET', '/v1/runs');
    expect(list.body.runs).toEqual([]);
    expect((await server.runtime.get(id)).status).toBe('waiting_human');
    expect(readEffects(server.effects)).toEqual([]);
  });

  it('keeps session ids and idempotency keys apart between tenants', async () => {
    const server = await startTestServer();
    const acme = apiClient(server.url, ACME_SUBMIT);
    const globex = apiClient(server.url, GLOBEX);
    const body = { input: 'mail', session_id: 'shared', options: { idempotency_key: 'k1' } };
    const a = await acme('POST', '/v1/runs?wait=true', body);
    const b = await globex('POST', '/v1/runs?wait=true', body);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body).toMatchObject({ session_id: 'shared', idempotency_key: 'k1', tenant_id: 'globex' });
    expect((await globex('GET', '/v1/runs?session_id=shared')).body.runs.map((r: { id: string }) => r.id)).toEqual([
      b.body.id,
    ]);
  });
});

describe('limits', () => {
  it('answers 429 with Retry-After once a token’s bucket is empty, per token', async () => {
    const server = await startTestServer({ limits: { rateBurst: 3, ratePerSecond: 1 } });
    const call = apiClient(server.url, ACME_VIEW);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call('GET', '/v1/runs')).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await call('GET', '/v1/runs');
    expect(limited.body.error.code).toBe('rate.limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await apiClient(server.url, ACME_ADMIN)('GET', '/v1/runs')).status).toBe(200);
  });

  it('caps the open event streams of a tenant with 429, and frees a slot when a stream closes', async () => {
    const server = await startTestServer({ limits: { sseConnectionsPerTenant: 2 } });
    const run = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'mail' });
    const url = `${server.url}/v1/runs/${run.body.id}/events`;
    const first = await connectSse(url, { token: ACME_VIEW });
    const second = await connectSse(`${server.url}/v1/events`, { token: ACME_VIEW });
    const third = await connectSse(url, { token: ACME_ADMIN });
    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(JSON.parse(third.body).error.code).toBe('stream.limit');
    expect((await connectSse(url, { token: GLOBEX })).status).toBe(404);
    const other = await connectSse(`${server.url}/v1/events`, { token: GLOBEX });
    expect(other.status).toBe(200);
    first.close();
    await expect.poll(async () => (await connectSse(url, { token: ACME_ADMIN })).status).toBe(200);
    second.close();
    other.close();
  });

  it('refuses a state-changing request from another origin', async () => {
    const server = await startTestServer();
    const reply = await apiClient(server.url, ACME_SUBMIT)(
      'POST',
      '/v1/runs',
      { input: 'hello' },
      {
        origin: 'https://evil.example',
      },
    );
    expect(reply.status).toBe(403);
    const sameOrigin = await apiClient(server.url, ACME_SUBMIT)(
      'POST',
      '/v1/runs',
      { input: 'hello' },
      {
        origin: server.url,
      },
    );
    expect(sameOrigin.status).toBe(201);
  });
});

describe('tickets', () => {
  it('opens event streams with ?ticket=, and only event streams', async () => {
    const server = await startTestServer();
    const run = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const issued = await apiClient(server.url, ACME_VIEW)('POST', '/v1/tickets');
    expect(issued.status).toBe(201);
    expect(issued.body.expires_at).toBeGreaterThan(Date.now());
    const ticket = encodeURIComponent(issued.body.ticket);
    const stream = await connectSse(`${server.url}/v1/runs/${run.body.id}/events?ticket=${ticket}`);
    expect(stream.status).toBe(200);
    const frames = await stream.rest();
    expect(frames.at(-1)).toMatchObject({ event: 'state' });
    expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1));
    expect((await apiClient(server.url)('GET', `/v1/runs/${run.body.id}?ticket=${ticket}`)).status).toBe(401);
    expect((await apiClient(server.url)('POST', `/v1/runs?ticket=${ticket}`, { input: 'hello' })).status).toBe(401);
    // A ticket carries its tenant: another tenant's run stays hidden.
    const globexRun = await apiClient(server.url, GLOBEX)('POST', '/v1/runs?wait=true', { input: 'hello' });
    expect((await connectSse(`${server.url}/v1/runs/${globexRun.body.id}/events?ticket=${ticket}`)).status).toBe(404);
  });

  it('refuses a forged, altered or expired ticket', async () => {
    const server = await startTestServer({ limits: { ticketTtlMs: 50 } });
    const run = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const issued = (await apiClient(server.url, ACME_VIEW)('POST', '/v1/tickets')).body as {
      ticket: string;
      expires_at: number;
    };
    const { ticket } = issued;
    const [payload, signature] = ticket.split('.') as [string, string];
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${Buffer.from(JSON.stringify({ ...body, t: 'globex' })).toString('base64url')}.${signature}`;
    const url = (t: string) => `${server.url}/v1/runs/${run.body.id}/events?ticket=${encodeURIComponent(t)}`;
    expect((await connectSse(url(forged))).status).toBe(401);
    expect((await connectSse(url(`${payload}.${signature.slice(1)}x`))).status).toBe(401);
    expect((await connectSse(url('garbage'))).status).toBe(401);
    await waitUntil(() => Date.now() >= issued.expires_at, 'the ticket to expire');
    const expired = await connectSse(url(ticket));
    expect(expired.status).toBe(401);
    expect(JSON.parse(expired.body).error.message).toMatch(/expired/);
  });
});

describe('ticket renewal and lifetime', () => {
  type Issued = { ticket: string; expires_at: number; renewable_until: number };
  const bodyOf = (ticket: string) =>
    JSON.parse(Buffer.from(ticket.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;

  it('renews a ticket for the same caller and tenant, and lets an expired one reopen a stream only as a reconnect', async () => {
    const server = await startTestServer({ limits: { ticketTtlMs: 1 } });
    const acmeRun = await apiClient(server.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const globexRun = await apiClient(server.url, GLOBEX)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const issued = (await apiClient(server.url, ACME_VIEW)('POST', '/v1/tickets')).body as Issued;
    expect(issued.renewable_until - issued.expires_at).toBeGreaterThan(60_000);
    await waitUntil(() => Date.now() >= issued.expires_at, 'the ticket to expire');
    const events = (ticket: string, runId = acmeRun.body.id as string) =>
      `${server.url}/v1/runs/${runId}/events?ticket=${encodeURIComponent(ticket)}`;

    // Expired for a new stream, and the answer says how to renew.
    const fresh = await connectSse(events(issued.ticket));
    expect(fresh.status).toBe(401);
    expect(JSON.parse(fresh.body).error).toMatchObject({ code: 'auth.required', details: { reason: 'expired' } });
    expect(JSON.parse(fresh.body).error.message).toMatch(/POST \/v1\/tickets/);
    // An EventSource reconnecting (it sends Last-Event-ID) with the same URL is let back in.
    const reconnect = await connectSse(events(issued.ticket), { lastEventId: '1' });
    expect(reconnect.status).toBe(200);
    expect((await reconnect.rest())[0]).toMatchObject({ id: '2' });

    // Renewal: no token, the old ticket; the new one is the same caller with the same limit.
    const renewed = await apiClient(server.url)('POST', `/v1/tickets?ticket=${encodeURIComponent(issued.ticket)}`);
    expect(renewed.status).toBe(201);
    const next = renewed.body as Issued;
    expect(next.ticket).not.toBe(issued.ticket);
    expect(next.renewable_until).toBe(issued.renewable_until);
    expect(bodyOf(next.ticket)).toMatchObject({ i: bodyOf(issued.ticket).i, n: 'viewer', t: 'acme', r: ['view'] });
    await waitUntil(() => Date.now() >= next.expires_at, 'the renewed ticket to expire');
    expect((await connectSse(events(next.ticket), { lastEventId: '0' })).status).toBe(200);
    // Still acme's: globex's run is hidden; and still a ticket: no other route takes it.
    expect((await connectSse(events(next.ticket, globexRun.body.id), { lastEventId: '0' })).status).toBe(404);
    const ticketQuery = `ticket=${encodeURIComponent(next.ticket)}`;
    expect((await apiClient(server.url)('GET', `/v1/runs?${ticketQuery}`)).status).toBe(401);
    expect((await apiClient(server.url)('POST', `/v1/runs?${ticketQuery}`, { input: 'hello' })).status).toBe(401);
    expect((await apiClient(server.url)('GET', `/v1/tickets?${ticketQuery}`)).status).toBe(401);
    // A forged ticket renews nothing.
    const [payload, signature] = issued.ticket.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ ...bodyOf(issued.ticket), t: 'globex' })).toString('base64url')}.${signature}`;
    for (const bad of [forged, `${payload}.${signature.slice(1)}x`, 'garbage']) {
      const refused = await apiClient(server.url)('POST', `/v1/tickets?ticket=${encodeURIComponent(bad)}`);
      expect(refused.status).toBe(401);
      expect(refused.body.error.details).toEqual({ reason: 'invalid' });
      expect((await connectSse(events(bad), { lastEventId: '1' })).status).toBe(401);
    }
  });

  it('refuses a ticket past its renewal limit, and one whose token is no longer configured', async () => {
    const first = await startTestServer();
    const run = await apiClient(first.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const { ticket } = (await apiClient(first.url, ACME_VIEW)('POST', '/v1/tickets')).body as Issued;
    await first.close();
    const path = `/v1/runs/${run.body.id}/events?ticket=${encodeURIComponent(ticket)}`;
    const strict = await startTestServer({ database: first.db, limits: { ticketRenewMs: 1 } });
    const old = await connectSse(`${strict.url}${path}`, { lastEventId: '1' });
    expect(old.status).toBe(401);
    expect(JSON.parse(old.body).error.details).toEqual({ reason: 'too_old' });
    const renewal = await apiClient(strict.url)('POST', `/v1/tickets?ticket=${encodeURIComponent(ticket)}`);
    expect(renewal.body.error.details).toEqual({ reason: 'too_old' });
    await strict.close();
    const without = await startTestServer({
      database: first.db,
      auth: { tokens: [{ token: ACME_ADMIN, tenant: 'acme', roles: ['admin'], name: 'acme-admin' }] },
    });
    const revoked = await connectSse(`${without.url}${path}`);
    expect(revoked.status).toBe(401);
    expect(JSON.parse(revoked.body).error.details).toEqual({ reason: 'revoked' });
  });

  it('keeps the ticket key in the database, so a ticket outlives a restart; a configured key works without one', async () => {
    const first = await startTestServer();
    const run = await apiClient(first.url, ACME_SUBMIT)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const { ticket } = (await apiClient(first.url, ACME_VIEW)('POST', '/v1/tickets')).body as Issued;
    await first.close();
    const path = `/v1/runs/${run.body.id}/events?ticket=${encodeURIComponent(ticket)}`;
    const restarted = await startTestServer({ database: first.db });
    expect((await connectSse(`${restarted.url}${path}`)).status).toBe(200);
    // Another database has another key.
    const elsewhere = await startTestServer();
    expect((await connectSse(`${elsewhere.url}/v1/events?ticket=${encodeURIComponent(ticket)}`)).status).toBe(401);

    const ticketSecret = 'a-configured-ticket-secret-0123456789';
    const auth = loadAuthConfig({
      env: { BATON_TOKENS: JSON.stringify({ tokens: TEST_AUTH.tokens }), BATON_TICKET_SECRET: ticketSecret },
    });
    expect(auth.ticketSecret).toBe(ticketSecret);
    const [a, b] = [await startTestServer({ auth }), await startTestServer({ auth })];
    const shared = (await apiClient(a.url, ACME_VIEW)('POST', '/v1/tickets')).body as Issued;
    expect((await connectSse(`${b.url}/v1/events?ticket=${encodeURIComponent(shared.ticket)}`)).status).toBe(200);
    expect(() => loadAuthConfig({ env: { BATON_TICKET_SECRET: 'too-short' } })).toThrow(
      /BATON_TICKET_SECRET has 9 characters; it needs at least 32/,
    );
  });
});

describe('start-up', () => {
  it('refuses to listen on a non-loopback address without tokens', async () => {
    const { db, effects } = tempFiles();
    const agent = createServerAgent(effects);
    const runtime = createRuntime({ database: db, planner: agent.planner, tools: agent.tools });
    try {
      const server = createServer({ runtime, auth: { tokens: [] } });
      await expect(server.listen({ host: '0.0.0.0', port: 0 })).rejects.toThrow(
        /Refusing to listen on '0\.0\.0\.0' without tokens/,
      );
      await expect(server.listen({ host: '::', port: 0 })).rejects.toMatchObject({ code: 'input.invalid' });
      const withTokens = createServer({
        runtime,
        auth: loadAuthConfig({
          env: { BATON_TOKENS: JSON.stringify({ tokens: [{ token: ACME_ADMIN, tenant: 'acme', roles: ['admin'] }] }) },
        }),
      });
      const listening = await withTokens.listen({ host: '0.0.0.0', port: 0 });
      await listening.close();
    } finally {
      await runtime.close();
    }
  });

  it('in dev mode (no tokens, loopback) lets every caller in as tenant default, on loopback hosts only', async () => {
    const server = await startTestServer({ auth: { tokens: [] } });
    const call = apiClient(server.url);
    const run = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    expect(run.body).toMatchObject({ status: 'waiting_human', tenant_id: 'default' });
    const approved = await call('POST', `/v1/runs/${run.body.id}/approvals/${run.body.pending_approval_id}`, {
      decision: 'approve',
    });
    expect(approved.body.decided_by).toBe('dev');
    // A name that resolves to 127.0.0.1 (DNS rebinding) is not a loopback host.
    expect(await statusWithHost(server.url, 'evil.example:7420')).toBe(403);
    expect(await statusWithHost(server.url, 'localhost:7420')).toBe(200);
  });

  it('loads tokens from a file or the environment, and names what is wrong without echoing tokens', () => {
    const { dir } = tempFiles();
    const file = join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({ tokens: [{ token: ACME_ADMIN, tenant: 'acme', roles: ['admin'], name: 'ops' }] }),
    );
    expect(loadAuthConfig({ file }).tokens[0]).toMatchObject({ tenant: 'acme', name: 'ops' });
    expect(loadAuthConfig({ env: { BATON_TOKENS_FILE: file } }).tokens).toHaveLength(1);
    expect(loadAuthConfig({ env: {} }).tokens).toEqual([]);
    expect(() => loadAuthConfig({ env: { BATON_TOKENS: '{"tokens": [' } })).toThrow(/BATON_TOKENS is not valid JSON/);
    // A tokens text that is not JSON is never quoted back: it holds tokens.
    let quoted = '';
    try {
      loadAuthConfig({ env: { BATON_TOKENS: 'tok_secret_0123456789abcdef,tok_other' } });
    } catch (error) {
      quoted = (error as Error).message;
    }
    expect(quoted).toMatch(/BATON_TOKENS is not valid JSON/);
    expect(quoted).not.toContain('tok_');
    const weak = JSON.stringify({ tokens: [{ token: 'short', tenant: 'acme', roles: ['admin'] }] });
    expect(() => loadAuthConfig({ env: { BATON_TOKENS: weak } })).toThrow(/tokens\.0\.token/);
    const badRole = JSON.stringify({ tokens: [{ token: ACME_ADMIN, tenant: 'acme', roles: ['root'] }] });
    let message = '';
    try {
      loadAuthConfig({ env: { BATON_TOKENS: badRole } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/roles/);
    expect(message).not.toContain(ACME_ADMIN);
  });
});

/** GET /v1/runs with a chosen Host header (fetch does not let a caller set one). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/runs`, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
