import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baton, jsonLines, startServe, type ServeChild } from './cli-child.js';

describe('baton serve with the demo agent', () => {
  let dir: string;
  let server: ServeChild;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-serve-'));
    server = await startServe(['--port', '0', '--db', join(dir, 'b.db'), '--dir', join(dir, 'configs')]);
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the URL it listens on first, on loopback, then the inspector', () => {
    const [first, second] = server.output().split('\n');
    expect(first).toMatch(/^Listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(second).toBe(`Inspector: ${server.url}/inspector/`);
  });

  it('says a port in use is in use, with --port, and a public address without tokens needs --tokens', async () => {
    const port = new URL(server.url).port;
    const flags = ['--db', join(dir, 'refused.db'), '--dir', join(dir, 'c3')];
    const taken = await baton(['serve', '--port', port, ...flags]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(
      `baton serve: Cannot listen on 127.0.0.1:${port}: the port is in use (by another server, or another baton serve) (server.listen_failed)\n` +
        'Choose another port with --port (--port 0 picks a free one).\n',
    );
    const json = await baton(['serve', '--port', port, '--json', ...flags]);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: { code: 'server.listen_failed', details: { host: '127.0.0.1', port: Number(port), cause: 'EADDRINUSE' } },
    });
    const open = await baton(['serve', '--host', '0.0.0.0', '--port', '0', ...flags]);
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/Refusing to listen on '0\.0\.0\.0' without tokens.*--tokens <file>/);
  });

  it('serves the inspector from the package, whatever the working directory', async () => {
    const elsewhere = await startServe(['--port', '0', '--db', join(dir, 'other.db'), '--dir', join(dir, 'c2')], {
      cwd: dir,
    });
    try {
      const page = await fetch(`${elsewhere.url}/inspector/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'self'/);
      expect(await page.text()).toContain('<script type="module" src="main.js"></script>');
      const script = await fetch(`${elsewhere.url}/inspector/main.js`);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await script.text()).toContain('mountRunsView');
      const root = await fetch(`${elsewhere.url}/`, { redirect: 'manual' });
      expect(root.headers.get('location')).toBe('/inspector/');
      const missing = await fetch(`${elsewhere.url}/inspector/../package.json`);
      expect(missing.status).toBe(404);
      const types = await fetch(`${elsewhere.url}/inspector/types.d.ts`);
      expect(types.status).toBe(404);
    } finally {
      await elsewhere.stop();
    }
  });

  it('means the same session in process as on the server: a busy one is busy for both', async () => {
    const started = await fetch(`${server.url}/v1/runs?wait=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Archive the stale configs', session_id: 'ops-shared' }),
    });
    const run = (await started.json()) as { id: string; status: string; session_id: string };
    expect(run).toMatchObject({ status: 'waiting_human', session_id: 'ops-shared' });
    const second = await baton(['run', 'Archive again', '--session', 'ops-shared', '--db', join(dir, 'b.db')]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Session 'ops-shared' already has an active run '${run.id}' (session.busy)`);
    const cancelled = await fetch(`${server.url}/v1/runs/${run.id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
  });

  it('runs against it with live progress and ends with the answer', async () => {
    const { code, stdout, stderr } = await baton([
      'run',
      'Archive the stale configs',
      '--approve',
      '--url',
      server.url,
    ]);

    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Run run_\\S+ \\(session \\S+\\) on ${server.url}$`, 'm'));
    expect(stdout).toMatch(/^\[\d+\] planning → executing$/m);
    expect(stdout).toMatch(/^\[\d+\] {3}configs\.archive succeeded/m);
    expect(stdout).toMatch(/^\[\d+\] approval approved by dev$/m);
    expect(stdout).toMatch(/^Answer: Archived 3 stale configs/m);
    expect(stdout).toMatch(/^Run run_\S+ succeeded$/m);
  });

  it('prints parseable JSON lines with --json', async () => {
    const { code, stdout, stderr } = await baton(['run', 'Archive', '--reject', '--json', '--url', server.url]);

    expect(code, stderr).toBe(0);
    const lines = jsonLines(stdout);
    const events = lines.slice(0, -1) as { seq: number; type: string; run_id: string }[];
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'state', data: { to: 'succeeded' } });
    expect(lines.at(-1)).toMatchObject({
      type: 'summary',
      run: { id: events[0]!.run_id, status: 'succeeded', answer: expect.stringMatching(/^Nothing was archived/) },
    });
  });

  it('approves, shows and cancels runs over HTTP', async () => {
    const [first, second] = await Promise.all([
      baton(['run', 'Archive one', '--json', '--url', server.url]),
      baton(['run', 'Archive two', '--json', '--url', server.url]),
    ]);
    expect([first.code, second.code]).toEqual([3, 3]);
    // The hint names the server, so the command it suggests works as printed.
    expect(first.stderr).toContain(`Decide with 'baton approve `);
    expect(first.stderr).toContain(` --url ${server.url}'`);
    const idOf = (stdout: string) => (jsonLines(stdout).at(-1) as { run: { id: string } }).run.id;
    const [approveId, cancelId] = [idOf(first.stdout), idOf(second.stdout)];

    const [approved, cancelled] = await Promise.all([
      baton(['approve', approveId, '--reason', 'fine', '--json', '--url', server.url]),
      baton(['cancel', cancelId, '--json', '--url', server.url]),
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      approval: { status: 'approved', decided_by: 'dev', reason: 'fine' },
      run: { id: approveId },
    });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: cancelId, status: 'failed', stop_reason: 'cancelled' });

    // Deciding a run that waits for nothing is a conflict, not a missing run.
    const finished = await baton(['approve', approveId, '--url', server.url]);
    expect(finished.code).toBe(1);
    expect(finished.stderr).toMatch(/waits for no approval \(run\.invalid_transition\)/);

    const [shown, again, missing] = await Promise.all([
      baton(['show', approveId, '--json', '--url', server.url]),
      baton(['cancel', cancelId, '--url', server.url]),
      baton(['show', 'run_missing', '--url', server.url]),
    ]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ run: { status: 'succeeded' }, steps: expect.any(Array) });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/run\.invalid_transition/);
    expect(missing.code).toBe(4);
  });
});
