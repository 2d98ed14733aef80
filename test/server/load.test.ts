import { describe, expect, it } from 'vitest';
import { eventsOf } from '../helpers/runtime.js';
import { connectSse, frameData } from '../helpers/sse-client.js';
import { apiClient, startTestServer, token } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';

const RUNS = 50;

describe('load on loopback (bounded)', () => {
  it('runs 50 runs at once with 100 SSE subscribers, each receiving every event of its run', async () => {
    const began = Date.now();
    const server = await startTestServer({ limits: { sseConnectionsPerTenant: 2 * RUNS + 10 } });
    const submit = apiClient(server.url, token('acme-submit'));
    const { ticket } = (await apiClient(server.url, token('acme-view'))('POST', '/v1/tickets')).body as {
      ticket: string;
    };
    const subscribers = await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const run = await submit('POST', '/v1/runs', { input: `write:4:${40 + (i % 5) * 10}` });
        expect(run.status).toBe(201);
        const url = `${server.url}/v1/runs/${run.body.id}/events`;
        // One subscriber with a token, one the way a browser would, with a ticket.
        const streams = await Promise.all([
          connectSse(url, { token: token('acme-view') }),
          connectSse(`${url}?ticket=${encodeURIComponent(ticket)}`),
        ]);
        return streams.map((stream) => ({ runId: run.body.id as string, stream }));
      }),
    );
    const all = subscribers.flat();
    expect(all).toHaveLength(2 * RUNS);
    expect(all.every(({ stream }) => stream.status === 200)).toBe(true);
    const received = await Promise.all(all.map(({ stream }) => stream.rest(scaled(30_000))));
    for (const [i, { runId }] of all.entries()) {
      const log = await eventsOf(server.runtime, runId);
      const frames = received[i]!;
      expect(frames.map((f) => Number(f.id))).toEqual(log.map((e) => e.seq));
      expect(frames.map((f) => frameData<{ run_id: string }>(f).run_id)).toEqual(log.map(() => runId));
      expect(frames.at(-1)!.event).toBe('state');
      expect((await server.runtime.get(runId)).status).toBe('succeeded');
    }
    expect(Date.now() - began).toBeLessThan(30_000);
  });
});
