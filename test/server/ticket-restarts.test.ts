/**
 * SSE tickets and the stream of every run against real `baton serve` processes (the built CLI)
 * and the `eventsource` package's EventSource, which, like a browser's, reconnects on its own
 * with the same URL (and so the same ticket) and `Last-Event-ID`: through a restart of the
 * server, and across two servers on one database behind one address.
 */
import { writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, type ServeChild } from '../cli/cli-child.js';
import { scaled } from '../helpers/limits.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';

const ADMIN = 'ticket-admin-0123456789abcdef';
const VIEW = 'ticket-view-0123456789abcdef';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A database and tokens for `baton serve`, and how to start one on them. */
function deployment() {
  const dir = tempDir();
  const tokens = join(dir, 'tokens.json');
  writeFileSync(
    tokens,
    JSON.stringify({
      tokens: [
        { token: ADMIN, tenant: 'acme', roles: ['admin'], name: 'ops' },
        { token: VIEW, tenant: 'acme', roles: ['view'], name: 'viewer' },
      ],
    }),
  );
  const args = ['--db', join(dir, 'baton.db'), '--dir', join(dir, 'configs'), '--tokens', tokens];
  return async (port = 0): Promise<ServeChild> => {
    const server = await startServe(['--port', String(port), ...args]);
    cleanups.push(() => void server.proc.kill('SIGKILL'));
    return server;
  };
}

async function call(url: string, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

/** Starts a demo run and waits until it waits for its approval; the run.created and state events it committed. */
async function runToApproval(url: string): Promise<{ id: string; events: string[] }> {
  const run = await call(url, ADMIN, 'POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' });
  expect(run.status).toBe('waiting_human');
  const id = run.id as string;
  const exported = await call(url, ADMIN, 'GET', `/v1/runs/${id}/export`);
  const events = (exported.events as { type: string; seq: number }[])
    .filter((e) => e.type === 'run.created' || e.type === 'state')
    .map((e) => `${id}:${e.seq}`);
  return { id, events };
}

/** An EventSource on `/v1/events` with a ticket, recording what it receives. */
function follow(url: string) {
  const es = new EventSource(url);
  cleanups.push(() => es.close());
  const received: { key: string; id: number }[] = [];
  const cursors: number[] = [];
  let opens = 0;
  for (const name of ['run.created', 'state']) {
    es.addEventListener(name, (message) => {
      const data = JSON.parse(message.data) as { run_id: string; seq: number };
      received.push({ key: `${data.run_id}:${data.seq}`, id: Number(message.lastEventId) });
    });
  }
  es.addEventListener('cursor', (message) => cursors.push(Number(message.lastEventId)));
  es.addEventListener('open', () => (opens += 1));
  return {
    es,
    received,
    cursors,
    opens: () => opens,
    /** Resolves once every one of `keys` has arrived. */
    async has(keys: string[], what: string) {
      await waitUntil(
        () => {
          // A refused reconnect (401) closes an EventSource for good: nothing more will come.
          if (es.readyState === es.CLOSED) throw new Error(`The EventSource was closed while waiting for ${what}`);
          const got = new Set(received.map((r) => r.key));
          return keys.every((key) => got.has(key));
        },
        what,
        scaled(60_000),
      );
    },
  };
}

/** A TCP proxy: one address in front of whichever server `to` names now. */
async function proxy(): Promise<{ url: string; to(url: string): void; cut(): void }> {
  let target: URL | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (!target) return void client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    to: (url) => (target = new URL(url)),
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

function expectOnceInOrder(received: { key: string; id: number }[], expected: string[]) {
  expect(received.map((r) => r.key)).toEqual(expected);
  const ids = received.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
}

describe('an EventSource with a ticket on the stream of every run', () => {
  it('keeps receiving through a restart of baton serve (SIGTERM) on the same database, missing nothing committed meanwhile', async () => {
    const start = deployment();
    const first = await start();
    const port = Number(new URL(first.url).port);
    const { ticket } = (await call(first.url, VIEW, 'POST', '/v1/tickets')) as { ticket: string };
    const stream = follow(`${first.url}/v1/events?ticket=${encodeURIComponent(ticket)}`);
    await waitUntil(() => stream.cursors.length === 1, 'the stream to open');
    const before = await runToApproval(first.url);
    await stream.has(before.events, "the first run's events");

    expect((await first.stop('SIGTERM')).code).toBe(0);
    const second = await start(port);
    // Committed before the EventSource is back (it waits 3 s to reconnect): replayed after its Last-Event-ID.
    const during = await runToApproval(second.url);
    await stream.has(during.events, 'the events of the run started while the client was away');
    const after = await runToApproval(second.url);
    await stream.has(after.events, 'the events of the run started after the restart');

    expect(stream.opens()).toBe(2);
    expect(stream.es.readyState).toBe(stream.es.OPEN);
    expectOnceInOrder(stream.received, [...before.events, ...during.events, ...after.events]);
  });

  it('is served by a second baton serve on the same database with the same ticket, behind one address (SIGKILL of the first)', async () => {
    const start = deployment();
    const [a, b] = [await start(), await start()];
    const front = await proxy();
    front.to(a.url);
    const { ticket } = (await call(front.url, VIEW, 'POST', '/v1/tickets')) as { ticket: string };
    const stream = follow(`${front.url}/v1/events?ticket=${encodeURIComponent(ticket)}`);
    await waitUntil(() => stream.cursors.length === 1, 'the stream to open on A');
    const onA = await runToApproval(a.url);
    await stream.has(onA.events, 'the events of a run on A');

    // A dies; the address now leads to B, which never saw this ticket.
    front.to(b.url);
    expect((await a.stop('SIGKILL')).code).toBeNull();
    front.cut();
    const onB = await runToApproval(b.url);
    await stream.has(onB.events, 'the events of a run on B');
    expect(stream.opens()).toBe(2);
    expectOnceInOrder(stream.received, [...onA.events, ...onB.events]);

    // A fresh EventSource on B with the same ticket (within its minute) and `?after=` resumes too.
    const again = follow(`${b.url}/v1/events?ticket=${encodeURIComponent(ticket)}&after=${stream.received[0]!.id}`);
    await again.has(onB.events, 'the replay on B');
    expect(again.received.map((r) => r.key)).toEqual([...onA.events.slice(1), ...onB.events]);
  });
});
