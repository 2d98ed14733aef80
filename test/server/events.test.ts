import { describe, expect, it } from 'vitest';
import { eventsOf } from '../helpers/runtime.js';
import { connectSse, frameData, type SseFrame } from '../helpers/sse-client.js';
import { apiClient, startTestServer, token, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait-until.js';

const SUBMIT = token('acme-submit');
const VIEW = token('acme-view');
const APPROVE = token('acme-approve');
const GLOBEX = token('globex-admin');

interface EventData {
  run_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  created_at: number;
}

/** The frames as the stored events they stand for. */
function asEvents(frames: SseFrame[]) {
  return frames.map((frame) => {
    const data = frameData<EventData>(frame);
    expect(frame.event).toBe(data.type);
    if (frame.event !== 'draft') expect(frame.id).toBe(String(data.seq));
    return { runId: data.run_id, seq: data.seq, type: data.type, data: data.data, createdAt: data.created_at };
  });
}

async function stored(server: TestServer, runId: string) {
  return (await eventsOf(server.runtime, runId)).map((e) => ({ ...e, data: JSON.parse(JSON.stringify(e.data)) }));
}

const eventsUrl = (server: TestServer, runId: string, query = '') => `${server.url}/v1/runs/${runId}/events${query}`;

describe('a run’s event stream', () => {
  it('sends every event with its type and seq, then ends after the terminal event', async () => {
    const server = await startTestServer();
    const run = await apiClient(server.url, SUBMIT)('POST', '/v1/runs', { input: 'write:2' });
    const stream = await connectSse(eventsUrl(server, run.body.id), { token: VIEW });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = await stream.rest();
    expect(asEvents(frames)).toEqual(await stored(server, run.body.id));
    expect(frames[0]!.event).toBe('run.created');
    expect(frameData<EventData>(frames.at(-1)!).data).toMatchObject({ to: 'succeeded' });
  });

  it('resumes with Last-Event-ID: exactly the missed events, in order, once, and nothing from other runs or tenants', async () => {
    const server = await startTestServer();
    const acme = apiClient(server.url, SUBMIT);
    const run = await acme('POST', '/v1/runs', { input: 'write:6:40' });
    const first = await connectSse(eventsUrl(server, run.body.id), { token: VIEW });
    const before = await first.until((frame) => frame.event === 'action');
    first.close();
    // While the client is away: its run moves on, and runs of both tenants make their own events.
    const others = await Promise.all([
      acme('POST', '/v1/runs', { input: 'write:3' }),
      apiClient(server.url, GLOBEX)('POST', '/v1/runs', { input: 'write:3' }),
    ]);
    await waitUntil(
      async () => (await stored(server, run.body.id)).length > before.length,
      'the run to move on while the client is away',
    );
    const second = await connectSse(eventsUrl(server, run.body.id), { token: VIEW, lastEventId: first.lastEventId });
    const after = await second.rest();
    expect(Number(first.lastEventId)).toBe(before.length);
    expect(after.length).toBeGreaterThan(0);
    expect(Number(after[0]!.id)).toBe(before.length + 1);
    const all = asEvents([...before, ...after]);
    expect(all).toEqual(await stored(server, run.body.id));
    expect(new Set(all.map((e) => e.runId))).toEqual(new Set([run.body.id]));
    for (const other of others) await server.runtime.wait(other.body.id);
  });

  it('replays from ?after=, and a Last-Event-ID header wins over it', async () => {
    const server = await startTestServer();
    const run = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'write:1' });
    const log = await stored(server, run.body.id);
    const fromThree = await connectSse(eventsUrl(server, run.body.id, '?after=3'), { token: VIEW });
    expect(asEvents(await fromThree.rest())).toEqual(log.slice(3));
    const header = await connectSse(eventsUrl(server, run.body.id, '?after=1'), { token: VIEW, lastEventId: '5' });
    expect(asEvents(await header.rest())).toEqual(log.slice(5));
    const bad = await connectSse(eventsUrl(server, run.body.id), { token: VIEW, lastEventId: 'five' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('input.invalid');
  });

  it('answers 204 for a run that has ended when nothing is left to send, so EventSource stops', async () => {
    const server = await startTestServer();
    const run = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const last = (await stored(server, run.body.id)).at(-1)!.seq;
    const done = await connectSse(eventsUrl(server, run.body.id), { token: VIEW, lastEventId: String(last) });
    expect(done.status).toBe(204);
  });

  it('streams drafts live as `event: draft` without an id, between the stored events', async () => {
    const server = await startTestServer();
    const run = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'draft' });
    const stream = await connectSse(eventsUrl(server, run.body.id), { token: VIEW });
    await stream.until((frame) => frame.event === 'approval_request');
    const decided = await apiClient(server.url, APPROVE)(
      'POST',
      `/v1/runs/${run.body.id}/approvals/${run.body.pending_approval_id}`,
      {
        decision: 'approve',
      },
    );
    expect(decided.status).toBe(200);
    const rest = await stream.rest();
    const drafts = rest.filter((frame) => frame.event === 'draft');
    expect(drafts.map((frame) => frame.id)).toEqual([undefined, undefined]);
    expect(drafts.map((frame) => frameData<EventData>(frame).data)).toEqual([
      expect.objectContaining({ text: 'thinking' }),
      expect.objectContaining({ text: 'thinking harder' }),
    ]);
    const log = await stored(server, run.body.id);
    const lastBefore = Number(rest[rest.indexOf(drafts[0]!) - 1]!.id);
    expect(frameData<EventData>(drafts[0]!).seq).toBe(lastBefore);
    expect(stream.lastEventId).toBe(String(log.at(-1)!.seq));
    const ids = rest.filter((frame) => frame.event !== 'draft').map((frame) => Number(frame.id));
    expect(ids).toEqual(log.slice(log.length - ids.length).map((e) => e.seq));
  });

  it('keeps an idle stream alive with comments, and ends it with an error frame when the server closes', async () => {
    const server = await startTestServer({ limits: { heartbeatMs: 20 } });
    const run = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'mail' });
    const stream = await connectSse(eventsUrl(server, run.body.id), { token: VIEW });
    await stream.until((frame) => frame.event === 'state' && frameData<EventData>(frame).data.to === 'waiting_human');
    await expect.poll(() => stream.comments).toBeGreaterThanOrEqual(3);
    const closing = server.close();
    const error = await stream.next();
    expect(error?.event).toBe('error');
    expect(JSON.parse(error!.data)).toMatchObject({ error: { code: 'server.closing', kind: 'system' } });
    expect(await stream.next()).toBeUndefined();
    await closing;
  });
});

describe('the stream of all runs', () => {
  it('sends the state changes of the caller’s tenant only, each with its feed position as id', async () => {
    const server = await startTestServer();
    const stream = await connectSse(`${server.url}/v1/events`, { token: VIEW });
    expect(stream.status).toBe(200);
    const cursor = await stream.next();
    expect(cursor).toMatchObject({ event: 'cursor', id: '0' });
    expect(frameData(cursor!)).toEqual({ position: 0 });
    const globex = await apiClient(server.url, GLOBEX)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const acme = await apiClient(server.url, SUBMIT)('POST', '/v1/runs?wait=true', { input: 'write:1' });
    const frames = await stream.until(
      (frame) => frame.event === 'state' && frameData<EventData>(frame).data.to === 'succeeded',
    );
    stream.close();
    expect(new Set(frames.map((frame) => frameData<EventData>(frame).run_id))).toEqual(new Set([acme.body.id]));
    expect(new Set(frames.map((frame) => frame.event))).toEqual(new Set(['run.created', 'state']));
    const states = (await stored(server, acme.body.id)).filter((e) => e.type === 'state' || e.type === 'run.created');
    expect(frames.map((frame) => frameData<EventData>(frame).seq)).toEqual(states.map((e) => e.seq));
    // The ids are the feed's positions: increasing, and the same as the runtime's own read of the feed.
    const feed = await server.runtime.readFeed({ tenantId: 'acme' });
    expect(frames.map((frame) => Number(frame.id))).toEqual(feed.map((e) => e.position));
    expect(feed.map((e) => e.position)).toEqual([...feed.map((e) => e.position)].sort((a, b) => a - b));
    expect(globex.body.status).toBe('succeeded');
  });

  it('replays what a client missed after Last-Event-ID, none lost and none twice, within its tenant', async () => {
    const server = await startTestServer();
    const submit = apiClient(server.url, SUBMIT);
    const first = await connectSse(`${server.url}/v1/events`, { token: VIEW });
    const before = await submit('POST', '/v1/runs?wait=true', { input: 'write:1' });
    const seen = await first.until(
      (frame) => frame.event === 'state' && frameData<EventData>(frame).data.to === 'succeeded',
    );
    first.close();
    // While the client is away: runs of its tenant and another's.
    const missed: string[] = [];
    for (let i = 0; i < 3; i++) missed.push((await submit('POST', '/v1/runs?wait=true', { input: 'write:1' })).body.id);
    await apiClient(server.url, GLOBEX)('POST', '/v1/runs?wait=true', { input: 'hello' });
    const again = await connectSse(`${server.url}/v1/events`, { token: VIEW, lastEventId: first.lastEventId });
    const replayed = await again.until(
      (frame) =>
        frame.event === 'state' &&
        frameData<EventData>(frame).run_id === missed.at(-1) &&
        frameData<EventData>(frame).data.to === 'succeeded',
    );
    again.close();
    expect(replayed[0]).toMatchObject({ event: 'cursor', id: first.lastEventId });
    const events = [...seen.slice(1), ...replayed.slice(1)];
    const key = (frame: SseFrame) => `${frameData<EventData>(frame).run_id}:${frameData<EventData>(frame).seq}`;
    const expected: string[] = [];
    for (const id of [before.body.id as string, ...missed]) {
      for (const e of await stored(server, id)) {
        if (e.type === 'state' || e.type === 'run.created') expected.push(`${id}:${e.seq}`);
      }
    }
    expect(events.map(key)).toEqual(expected);
    const ids = events.map((frame) => Number(frame.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // `?after=` does the same for a client that opens a new EventSource.
    const fromUrl = await connectSse(`${server.url}/v1/events?after=${first.lastEventId}`, { token: VIEW });
    const same = await fromUrl.until((frame) => frame.id === replayed.at(-1)!.id);
    fromUrl.close();
    expect(same.slice(1).map(key)).toEqual(replayed.slice(1).map(key));
  });
});
