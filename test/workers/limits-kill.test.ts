/**
 * Per-key concurrency over two worker processes on PostgreSQL, through a SIGKILL: 20 runs, each
 * one call of a tool limited to 3 at once per key, against a receiver on loopback that counts
 * the calls in flight per key and records each call's effect by its idempotency key. One worker
 * is SIGKILLed while it holds slots (its calls held open at the receiver): its slots come back
 * only when their leases lapse, so the receiver never sees more than 3 calls of a key at once,
 * and every call's effect happens exactly once (the killed worker's calls, cut off before the
 * receiver answered, run again with the same key on the other worker).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createRuntime, createScriptedPlanner } from '../../src/index.js';
import { freshDatabaseOf } from '../helpers/dialects.js';
import type { LimitsChildConfig } from '../helpers/limits-child.js';
import { scaled } from '../helpers/limits.js';
import { hasPostgres } from '../helpers/pg.js';
import { spawnUntilJsonLine, type RunningChild } from '../helpers/spawn-child.js';
import { waitUntil } from '../helpers/wait-until.js';

const CHILD = fileURLToPath(new URL('../helpers/limits-child.ts', import.meta.url));
const LIMIT = 3;
const RUNS = 20;

/** The remote service: calls in flight per key (and the most at once), effects by idempotency key. */
function receiver() {
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();
  const effects = new Map<string, number>();
  let holding = true;
  const held: (() => void)[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { key, idempotency_key: idem } = JSON.parse(body) as { key: string; idempotency_key: string };
      const now = (inFlight.get(key) ?? 0) + 1;
      inFlight.set(key, now);
      most.set(key, Math.max(most.get(key) ?? 0, now));
      let over = false;
      const end = () => {
        if (over) return;
        over = true;
        inFlight.set(key, inFlight.get(key)! - 1);
      };
      // A caller gone before the answer (its process killed): no effect, no longer in flight.
      res.on('close', () => {
        if (!res.writableFinished) end();
      });
      const answer = () => {
        if (over) return;
        effects.set(idem, (effects.get(idem) ?? 0) + 1);
        end();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key, done: true }));
      };
      // While holding, every call stays open; after, each is answered a moment later, so calls overlap.
      if (holding) held.push(answer);
      else setTimeout(answer, 20);
    });
  });
  return {
    server,
    inFlight,
    most,
    effects,
    release() {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
  };
}

describe.skipIf(!hasPostgres())('per-key concurrency over two workers through a SIGKILL', () => {
  it(
    `never runs more than ${LIMIT} calls of a key at once, each exactly once, after a worker holding slots is killed`,
    { timeout: scaled(180_000) },
    async () => {
      const { database } = await freshDatabaseOf('postgres');
      const service = receiver();
      await new Promise<void>((resolve) => service.server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(service.server.address() as AddressInfo).port}/call`;
      const config: LimitsChildConfig = { database, url, limit: LIMIT, leaseMs: 2_000, claimEveryMs: 200 };
      const api = createRuntime({ database, planner: createScriptedPlanner([]), tools: [], drive: false });
      const db = new pg.Client({ connectionString: database });
      await db.connect();
      const workers: RunningChild<{ owner: string; pid: number }>[] = [];
      try {
        for (let i = 0; i < 2; i += 1) workers.push(await spawnUntilJsonLine(CHILD, [JSON.stringify(config)]));
        const runs = await Promise.all(
          Array.from({ length: RUNS }, (_, i) => api.start({ input: i % 2 === 0 ? 'tenant-a' : 'tenant-b' })),
        );
        // Every slot of both keys taken, the calls held open at the receiver; the rest wait.
        await waitUntil(
          () => service.inFlight.get('tenant-a') === LIMIT && service.inFlight.get('tenant-b') === LIMIT,
          `${LIMIT} calls of each key in flight`,
        );
        const { rows: slots } = await db.query<{ owner: string; n: number }>(
          'select owner, count(*)::int as n from limit_slots where expires_at >= extract(epoch from now()) * 1000 group by owner order by n desc',
        );
        expect(slots.reduce((sum, row) => sum + row.n, 0)).toBe(2 * LIMIT);
        const victim = workers.find((w) => w.first.owner === slots[0]!.owner)!;
        const holding = slots[0]!.n;
        expect(await victim.kill()).toBe('SIGKILL');
        // Its calls were cut off at the receiver; its slots are still held until their leases lapse.
        await waitUntil(
          () =>
            (service.inFlight.get('tenant-a') ?? 0) + (service.inFlight.get('tenant-b') ?? 0) === 2 * LIMIT - holding,
          'the killed worker’s calls gone from the receiver',
        );
        service.release();
        for (const run of runs) expect((await api.wait(run.id)).status).toBe('succeeded');

        expect(service.most.get('tenant-a')).toBe(LIMIT);
        expect(service.most.get('tenant-b')).toBe(LIMIT);
        // Each call's effect exactly once: one per run, whatever the kill cut off.
        expect(service.effects.size).toBe(RUNS);
        expect([...service.effects.values()].every((n) => n === 1)).toBe(true);
        const { rows: calls } = await db.query<{ id: string; attempts: number }>(
          "select id, attempts from tool_calls where tool = 'remote.call' and status = 'succeeded'",
        );
        expect(calls).toHaveLength(RUNS);
        // The killed worker's calls ran again (a second attempt), with the key the receiver saw once.
        expect(calls.filter((c) => c.attempts === 2)).toHaveLength(holding);
        const { rows: left } = await db.query<{ n: number }>(
          'select count(*)::int as n from limit_slots where expires_at >= extract(epoch from now()) * 1000',
        );
        expect(left[0]!.n).toBe(0);
        console.log(
          `limits through a SIGKILL: ${RUNS} runs, the victim held ${holding} slots; most at once per key ` +
            `a ${service.most.get('tenant-a')}, b ${service.most.get('tenant-b')} (limit ${LIMIT}); ${service.effects.size} effects, each once`,
        );
      } finally {
        for (const worker of workers) await worker.kill();
        await db.end();
        await api.close();
        await new Promise<void>((resolve) => service.server.close(() => resolve()));
      }
    },
  );
});
