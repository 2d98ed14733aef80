/**
 * The feed (`readFeed`, what `GET /v1/events` sends) and shared secrets, on a SQLite file and on
 * PostgreSQL: positions in commit order across runtimes, each event once, a reader paging while
 * two runtimes write misses nothing and sees nothing twice; a secret is the same for every
 * runtime on the database.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type FeedEvent, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { createWorld } from '../helpers/world.js';

function setup(database: string, effects: string): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: request.input } }] }
        : { type: 'final', answer: 'done' },
    ),
    tools: [createWorld(effects).read],
  };
}

const key = (e: { runId: string; seq: number }) => `${e.runId}:${e.seq}`;

/** Every feed event of the given runs, from their own logs, in each run's order. */
async function feedOfRuns(runtime: Runtime, runIds: string[]): Promise<Set<string>> {
  const all = new Set<string>();
  for (const id of runIds) {
    for (const e of await eventsOf(runtime, id)) if (e.type === 'state' || e.type === 'run.created') all.add(key(e));
  }
  return all;
}

describe.each(ALL_DIALECTS)('the feed on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('numbers every run’s run.created and state events once, in commit order, while a reader pages along', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const a = openRuntime(setup(database, effects));
    const b = openRuntime(setup(database, effects));
    await Promise.all([a.ready, b.ready]);
    expect(await a.feedHead()).toBe(0);
    // A reader on a third runtime pages from 0 while two runtimes start and finish runs at once.
    const reader = openRuntime({ ...setup(database, effects), recover: false });
    const seen: FeedEvent[] = [];
    let writing = true;
    const reading = (async () => {
      let last = 0;
      for (;;) {
        const done = !writing;
        const page = await reader.readFeed({ after: last, limit: 7 });
        seen.push(...page);
        last = page.at(-1)?.position ?? last;
        if (done && page.length === 0) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const ids = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const runtime = i % 2 === 0 ? a : b;
        const tenant = i % 3 === 0 ? 'globex' : 'acme';
        const run = await runtime.start({ input: `r${i}`, context: { tenant_id: tenant } });
        await runtime.wait(run.id);
        return { id: run.id, tenant };
      }),
    );
    writing = false;
    await reading;

    const positions = seen.map((e) => e.position);
    expect(new Set(positions).size).toBe(positions.length);
    expect(positions).toEqual([...positions].sort((x, y) => x - y));
    expect(new Set(seen.map(key))).toEqual(
      await feedOfRuns(
        a,
        ids.map((run) => run.id),
      ),
    );
    expect(new Set(seen.map(key)).size).toBe(seen.length);
    // Each run's events come in its own order.
    for (const { id } of ids) {
      const seqs = seen.filter((e) => e.runId === id).map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
    // The whole feed read again is what the reader saw, and the head is its last position.
    expect((await b.readFeed({ limit: 10_000 })).map((e) => e.position)).toEqual(positions);
    expect(await b.feedHead()).toBe(positions.at(-1));
    // One tenant's read is that tenant's runs only, in the same order.
    const acme = await a.readFeed({ tenantId: 'acme', limit: 10_000 });
    const acmeRuns = new Set(ids.filter((run) => run.tenant === 'acme').map((run) => run.id));
    expect(acme.map((e) => e.position)).toEqual(seen.filter((e) => acmeRuns.has(e.runId)).map((e) => e.position));
    expect(acme.every((e) => e.type === 'state' || e.type === 'run.created')).toBe(true);
  });

  it('forgets the events of pruned runs and never gives their positions again', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const first = await runtime.wait((await runtime.start({ input: 'old' })).id);
    const head = await runtime.feedHead();
    expect((await runtime.readFeed()).every((e) => e.runId === first.id)).toBe(true);
    await runtime.prune({ finishedBefore: Date.now() + 1 });
    expect(await runtime.readFeed()).toEqual([]);
    const second = await runtime.wait((await runtime.start({ input: 'new' })).id);
    const feed = await runtime.readFeed();
    expect(feed.map((e) => e.runId)).toEqual(feed.map(() => second.id));
    expect(feed[0]!.position).toBeGreaterThan(head);
  });
});

describe.each(ALL_DIALECTS)('shared secrets on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('creates a secret once and gives every runtime on the database the same one', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const a = openRuntime(setup(database, effects));
    const b = openRuntime(setup(database, effects));
    const [fromA, fromB] = await Promise.all([a.sharedSecret('sse-tickets'), b.sharedSecret('sse-tickets')]);
    expect(fromA).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fromB).toBe(fromA);
    await a.close();
    const reopened = openRuntime(setup(database, effects));
    expect(await reopened.sharedSecret('sse-tickets')).toBe(fromA);
    expect(await reopened.sharedSecret('another')).not.toBe(fromA);
  });
});
