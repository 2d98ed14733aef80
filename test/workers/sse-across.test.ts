/**
 * Live events across processes on PostgreSQL: `baton serve --no-worker` (process A) records a
 * run that `baton worker` (process B) drives. A client on A follows it from creation to answer
 * as it happens; disconnected after the approval request, it reconnects with `Last-Event-ID`
 * and gets exactly what it missed, then the rest live.
 */
import { describe, expect, it } from 'vitest';
import { freshDatabaseOf } from '../helpers/dialects.js';
import { hasPostgres } from '../helpers/pg.js';
import { connectSse, frameData, type SseFrame } from '../helpers/sse-client.js';
import { CLI_MAIN as CLI } from '../helpers/run-node.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempDir } from '../helpers/temp.js';
import { scaled } from '../helpers/limits.js';

async function call(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const seqOf = (frame: SseFrame) => Number(frame.id);

describe.skipIf(!hasPostgres())('events across processes on PostgreSQL', () => {
  it(
    'follows a run driven by another process live, and replays exactly what a reconnect missed',
    { timeout: scaled(120_000) },
    async () => {
      const { database } = await freshDatabaseOf('postgres');
      const dir = tempDir();
      const api = await spawnUntilJsonLine<{ url: string }>(CLI, [
        'serve',
        '--db',
        database,
        '--no-worker',
        '--port',
        '0',
        '--json',
        '--dir',
        `${dir}/configs`,
      ]);
      const worker = await spawnUntilJsonLine<{ worker: string }>(CLI, [
        'worker',
        '--db',
        database,
        '--json',
        '--dir',
        `${dir}/configs`,
      ]);
      try {
        const { url } = api.first;
        const created = await call(url, 'POST', '/v1/runs', { input: 'Archive the stale configs' });
        expect(created.status).toBe(201);
        const runId = created.body.id as string;

        // Live from creation: the worker drives, A streams, up to the approval request.
        const first = await connectSse(`${url}/v1/runs/${runId}/events`);
        expect(first.status).toBe(200);
        const before = await first.until((f) => f.event === 'approval_request', scaled(60_000));
        first.close();
        expect(before[0]!.event).toBe('run.created');
        expect(before.map(seqOf)).toEqual(before.map((_, i) => i + 1));
        const approvalId = frameData<{ data: { approval_id: string } }>(before.at(-1)!).data.approval_id;

        // Decided on A, applied by the worker; the client reconnects once the run has gone on.
        const decided = await call(url, 'POST', `/v1/runs/${runId}/approvals/${approvalId}`, { decision: 'approve' });
        expect(decided.status, JSON.stringify(decided.body)).toBe(200);
        await expect
          .poll(async () => (await call(url, 'GET', `/v1/runs/${runId}/steps`)).body.steps, { timeout: scaled(60_000) })
          .toHaveLength(3);
        const second = await connectSse(`${url}/v1/runs/${runId}/events`, { lastEventId: first.lastEventId });
        const after = await second.rest(scaled(60_000));
        const stored = (await call(url, 'GET', `/v1/runs/${runId}`)).body;
        expect(stored.status).toBe('succeeded');
        // Exactly the missed events, in order, none twice, through the terminal one.
        expect(after.map(seqOf)).toEqual(after.map((_, i) => Number(first.lastEventId) + 1 + i));
        expect(after.at(-1)).toMatchObject({ event: 'state' });
        expect(frameData<{ data: { to: string } }>(after.at(-1)!).data.to).toBe('succeeded');
        expect(after.some((f) => f.event === 'approval_result')).toBe(true);
        // The run was driven by the worker, never by A.
        expect(worker.lines().some((l) => l.type === 'event' && (l.event as { run_id: string }).run_id === runId)).toBe(
          true,
        );
      } finally {
        await api.kill();
        await worker.kill();
      }
    },
  );
});
