import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baton } from '../cli/cli-child.js';
import { canMountTmpfs, smallDisk } from '../helpers/full-disk.js';
import { apiClient, pollRun, startTestServer, token } from '../helpers/server.js';
import { readEffects } from '../helpers/world.js';
import { waitUntil } from '../helpers/wait-until.js';
import { scaled } from '../helpers/limits.js';

const SUBMIT = token('acme-submit');

describe.skipIf(!canMountTmpfs)('the server on a full disk', () => {
  it('answers 503 store.write_failed to a cancel it could not commit (and baton cancel fails), and cancels once space is back', async () => {
    const disk = smallDisk();
    const server = await startTestServer({ database: join(disk.dir, 'baton.db') });
    const call = apiClient(server.url, SUBMIT);
    const run = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    expect(run.body.status).toBe('waiting_human');
    disk.fill();
    const refused = await call('POST', `/v1/runs/${run.body.id}/cancel`, { reason: 'stop' });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({
      code: 'store.write_failed',
      kind: 'system',
      retryable: true,
      details: { cause: 'SQLITE_FULL' },
    });
    // The server says so to a load balancer while the database refuses its writes.
    expect(await apiClient(server.url)('GET', '/healthz')).toMatchObject({
      status: 503,
      body: { status: 'degraded', stalled_runs: 0, writes: 'refused' },
    });
    const cli = await baton(['cancel', run.body.id, '--url', server.url, '--token', SUBMIT], {
      timeoutMs: scaled(120_000),
    });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('store.write_failed');
    expect((await call('GET', `/v1/runs/${run.body.id}`)).body.status).toBe('waiting_human');
    disk.free();
    const cancelled = await call('POST', `/v1/runs/${run.body.id}/cancel`, { reason: 'stop' });
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'failed', stop_reason: 'cancelled' } });
    expect(await apiClient(server.url)('GET', '/healthz')).toMatchObject({
      status: 200,
      body: { status: 'ok', writes: 'ok' },
    });
    expect(readEffects(server.effects)).toEqual([]);
  });

  it('reports a stalled run in /healthz (503, degraded) until its commits land again', async () => {
    const disk = smallDisk();
    const server = await startTestServer({ database: join(disk.dir, 'baton.db') });
    const health = apiClient(server.url);
    expect(await health('GET', '/healthz')).toMatchObject({
      status: 200,
      body: { status: 'ok', stalled_runs: 0, writes: 'ok' },
    });
    const run = await server.runtime.start({ input: 'hello', context: { tenant_id: 'acme' } });
    // Accepted; its first transition is not committed yet.
    disk.fill();
    await waitUntil(async () => (await health('GET', '/healthz')).status === 503, '/healthz to answer 503');
    expect((await health('GET', '/healthz')).body).toEqual({ status: 'degraded', stalled_runs: 1, writes: 'refused' });
    disk.free();
    await pollRun(apiClient(server.url, SUBMIT), run.id, (r) => r.status === 'succeeded', scaled(60_000));
    await waitUntil(async () => (await health('GET', '/healthz')).status === 200, '/healthz to answer 200 again');
  });
});
