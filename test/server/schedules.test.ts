/**
 * The schedule routes: create (201; the same definition again is the same schedule, another
 * under its id `409 schedule.conflict`), list and read in the caller's tenant only, pause, resume,
 * trigger a run now (it names the schedule), delete; bad definitions are 400s naming what is
 * wrong; a viewer cannot create.
 */
import { describe, expect, it } from 'vitest';
import { apiClient, startTestServer, token } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait-until.js';

const ADMIN = token('acme-admin');
const OTHER = token('globex-admin');
const VIEW = token('acme-view');

describe('the schedule API', () => {
  it('creates, lists, reads, pauses, resumes, triggers and deletes a schedule of the caller’s tenant', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, ADMIN);
    const body = { id: 'nightly', cron: '0 2 * * *', timezone: 'Europe/Paris', input: 'write:1', catch_up: 'one' };
    const created = await call('POST', '/v1/schedules', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'nightly',
      status: 'active',
      cron: '0 2 * * *',
      timezone: 'Europe/Paris',
      every: null,
      overlap: 'skip',
      catch_up: 'one',
      context: { tenant_id: 'acme' },
      runs: 0,
    });
    // 02:00 in Paris, the next one after now.
    const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' });
    expect(paris.format(created.body.next_at as number)).toBe('02:00');
    expect(created.body.next_at).toBeGreaterThan(Date.now());
    const again = await call('POST', '/v1/schedules', body);
    expect(again.status).toBe(200);
    expect(again.body.created_at).toBe(created.body.created_at);
    // Another caller of the tenant sending the same definition gets the same schedule.
    const bySubmitter = await apiClient(server.url, token('acme-submit'))('POST', '/v1/schedules', body);
    expect(bySubmitter.status).toBe(200);
    expect(bySubmitter.body.created_at).toBe(created.body.created_at);
    const conflict = await call('POST', '/v1/schedules', { ...body, cron: '0 3 * * *' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('schedule.conflict');

    expect((await call('GET', '/v1/schedules')).body.schedules.map((s: { id: string }) => s.id)).toEqual(['nightly']);
    // Another tenant neither sees it nor reaches it, and may use the same id for its own.
    const other = apiClient(server.url, OTHER);
    expect((await other('GET', '/v1/schedules')).body.schedules).toEqual([]);
    expect((await other('GET', '/v1/schedules/nightly')).status).toBe(404);
    expect((await other('POST', '/v1/schedules/nightly/trigger')).status).toBe(404);

    const paused = await call('POST', '/v1/schedules/nightly/pause');
    expect(paused.body).toMatchObject({ status: 'paused', next_at: null });
    const triggered = await call('POST', '/v1/schedules/nightly/trigger');
    expect(triggered.status).toBe(201);
    expect(triggered.body.metadata).toMatchObject({ 'baton.schedule': 'nightly' });
    expect(triggered.body.tenant_id).toBe('acme');
    await server.runtime.wait(triggered.body.id as string);
    const resumed = await call('POST', '/v1/schedules/nightly/resume');
    expect(resumed.body).toMatchObject({ status: 'active', runs: 1, last_run_id: triggered.body.id });
    expect((await call('DELETE', '/v1/schedules/nightly')).status).toBe(204);
    expect((await call('GET', '/v1/schedules/nightly')).body.error.code).toBe('schedule.not_found');
  });

  it('ticks a schedule made over HTTP, and refuses bad definitions and callers without the role', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, ADMIN);
    const every = await call('POST', '/v1/schedules', { id: 'often', every: 1_000, input: 'write:2' });
    expect(every.status).toBe(201);
    await waitUntil(async () => (await call('GET', '/v1/schedules/often')).body.runs >= 1, 'a tick');
    const runs = await call('GET', '/v1/runs?metadata.baton.schedule=often');
    expect(runs.body.runs.length).toBeGreaterThanOrEqual(1);
    await call('DELETE', '/v1/schedules/often');

    for (const [bad, message] of [
      [{ id: 'c', cron: 'every day', input: 'x' }, "Cron expression 'every day' does not parse"],
      [{ id: 'c', every: 1_000, at: 5, input: 'x' }, 'exactly one of cron, every and at'],
      [{ id: 'c', every: 1_000, input: 'x', overlap: 'maybe' }, 'overlap must be one of'],
      [{ id: 'c', every: 1_000, input: 'x', color: 'red' }, 'color'],
    ] as const) {
      const refused = await call('POST', '/v1/schedules', bad);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('input.invalid');
      expect(JSON.stringify(refused.body.error)).toContain(message);
    }
    expect((await call('GET', '/v1/schedules')).body.schedules).toEqual([]);
    // A run started later: queued, saying when.
    const at = Date.now() + 3_600_000;
    const later = await call('POST', '/v1/runs', { input: 'write:3', start_at: new Date(at).toISOString() });
    expect(later.body).toMatchObject({ status: 'queued', start_at: at });
    const viewer = apiClient(server.url, VIEW);
    expect((await viewer('POST', '/v1/schedules', { id: 'v', every: 1_000, input: 'x' })).status).toBe(403);
    expect((await viewer('GET', '/v1/schedules')).status).toBe(200);
  });
});
