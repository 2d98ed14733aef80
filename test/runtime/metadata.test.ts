/**
 * Runs found by what they were started with, on both dialects: `start({ metadata, tags })` keeps
 * both on the run; `list()` finds runs by metadata entries and tags (every one named), by failure
 * code and by creation time, with any other filter, newest first, paged with a cursor; bad
 * metadata, tags and filters are `input.invalid` and change nothing; a prune takes the search
 * keys with the runs.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type Run, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, rowsOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { openRuntime } from '../helpers/runtime.js';

/** A run whose input starts with `fail` fails (its planner throws); any other answers at once. */
function setup(database: string): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) => {
      if (request.input.startsWith('fail')) throw new Error('the model is down');
      return { type: 'final', answer: `done: ${request.input}` };
    }),
    tools: [],
  };
}

const ids = (page: { runs: Run[] }) => page.runs.map((run) => run.id);

describe.each(ALL_DIALECTS)('run metadata and tags on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('keeps metadata and tags on the run and finds runs by them, with any other filter, page by page', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database));
    const started: Run[] = [];
    for (let i = 0; i < 12; i += 1) {
      const run = await runtime.start({
        input: i % 4 === 3 ? `fail ${i}` : `job ${i}`,
        metadata: { customer: i % 2 === 0 ? 'acme' : 'globex', priority: i % 3, urgent: i === 5, note: null },
        tags: i % 3 === 0 ? ['nightly', 'billing'] : ['billing'],
      });
      started.push(await runtime.wait(run.id));
    }
    const plain = await runtime.wait((await runtime.start({ input: 'no labels' })).id);
    expect(plain).toMatchObject({ metadata: {}, tags: [] });
    expect(await runtime.get(started[0]!.id)).toMatchObject({
      metadata: { customer: 'acme', priority: 0, urgent: false, note: null },
      tags: ['nightly', 'billing'],
    });
    const newestFirst = (pick: (i: number) => boolean) =>
      started
        .map((run, i) => [run.id, i] as const)
        .filter(([, i]) => pick(i))
        .map(([id]) => id)
        .reverse();

    expect(ids(await runtime.list({ metadata: { customer: 'acme' } }))).toEqual(newestFirst((i) => i % 2 === 0));
    // Values are matched as text: the number 2 and the boolean true.
    expect(ids(await runtime.list({ metadata: { priority: 2 } }))).toEqual(newestFirst((i) => i % 3 === 2));
    expect(ids(await runtime.list({ metadata: { urgent: true } }))).toEqual([started[5]!.id]);
    expect(ids(await runtime.list({ tag: 'nightly' }))).toEqual(newestFirst((i) => i % 3 === 0));
    // Every entry and tag named, and the other filters with them.
    expect(ids(await runtime.list({ metadata: { customer: 'acme' }, tag: 'nightly' }))).toEqual(
      newestFirst((i) => i % 2 === 0 && i % 3 === 0),
    );
    expect(
      ids(await runtime.list({ tags: ['nightly', 'billing'], metadata: { customer: 'globex', priority: 0 } })),
    ).toEqual(newestFirst((i) => i % 2 === 1 && i % 3 === 0));
    expect(ids(await runtime.list({ tag: 'billing', status: 'failed' }))).toEqual(newestFirst((i) => i % 4 === 3));
    expect(ids(await runtime.list({ tag: 'no-such-tag' }))).toEqual([]);

    // By failure code, alone and with a search key.
    const failed = await runtime.list({ failureCode: 'planner.failed' });
    expect(ids(failed)).toEqual(newestFirst((i) => i % 4 === 3));
    expect(failed.runs.every((run) => run.failure?.code === 'planner.failed')).toBe(true);
    expect(ids(await runtime.list({ failureCode: 'planner.failed', metadata: { customer: 'globex' } }))).toEqual(
      newestFirst((i) => i % 4 === 3 && i % 2 === 1),
    );
    expect(ids(await runtime.list({ failureCode: 'run.cancelled' }))).toEqual([]);

    // By creation time: [after, before).
    const from = started[4]!.createdAt;
    const to = started[8]!.createdAt;
    const inRange = (run: Run) => run.createdAt >= from && run.createdAt < to;
    const window = await runtime.list({ createdAfter: from, createdBefore: to });
    expect(ids(window)).toEqual(
      [...started, plain]
        .filter(inRange)
        .map((run) => run.id)
        .reverse(),
    );
    expect(ids(await runtime.list({ tag: 'billing', createdAfter: from, createdBefore: to }))).toEqual(
      started
        .filter(inRange)
        .map((run) => run.id)
        .reverse(),
    );

    // Paged: each run once, in order, whatever the page size.
    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await runtime.list({ tag: 'billing', limit: 5, ...(cursor ? { cursor } : {}) });
      pages.push(...ids(page));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toEqual(newestFirst(() => true));
  });

  it('refuses metadata, tags and filters out of bounds with input.invalid, creating nothing', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database));
    const bad: [unknown, unknown][] = [
      [['not', 'an', 'object'], undefined],
      [{ nested: { no: 1 } }, undefined],
      [{ 'bad key': 1 }, undefined],
      [{ long: 'x'.repeat(257) }, undefined],
      [{ nan: Number.NaN }, undefined],
      [Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])), undefined],
      [Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'.repeat(250)])), undefined],
      [undefined, 'not an array'],
      [undefined, ['has space']],
      [undefined, Array.from({ length: 21 }, (_, i) => `t${i}`)],
    ];
    for (const [metadata, tags] of bad) {
      await expect(
        runtime.start({
          input: 'x',
          ...(metadata !== undefined ? { metadata } : {}),
          ...(tags !== undefined ? { tags } : {}),
        } as never),
        JSON.stringify([metadata, tags]).slice(0, 80),
      ).rejects.toMatchObject({ code: 'input.invalid' });
    }
    expect((await runtime.list()).runs).toEqual([]);
    for (const filter of [
      { metadata: { a: { b: 1 } } },
      { tag: 'has space' },
      { failureCode: 'nope' },
      { createdAfter: -1 },
      { createdBefore: 1.5 },
      { tags: Array.from({ length: 9 }, (_, i) => `t${i}`) },
    ]) {
      await expect(runtime.list(filter as never), JSON.stringify(filter)).rejects.toMatchObject({
        code: 'input.invalid',
      });
    }
    // An idempotent start is the same run only with the same metadata and tags.
    const first = await runtime.start({ input: 'x', metadata: { a: 1 }, options: { idempotencyKey: 'k' } });
    expect((await runtime.start({ input: 'x', metadata: { a: 1 }, options: { idempotencyKey: 'k' } })).id).toBe(
      first.id,
    );
    await expect(
      runtime.start({ input: 'x', metadata: { a: 2 }, options: { idempotencyKey: 'k' } }),
    ).rejects.toMatchObject({ code: 'idempotency.mismatch' });
  });

  it('deletes the search keys of the runs a prune deletes', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database));
    const run = await runtime.wait(
      (await runtime.start({ input: 'a', metadata: { customer: 'acme' }, tags: ['t'] })).id,
    );
    const report = await runtime.prune({ finishedBefore: Date.now() + 1_000 });
    expect(report.runs).toBe(1);
    expect((await runtime.list({ tag: 't' })).runs).toEqual([]);
    const store = await rowsOf(runtime, database, dialect);
    expect(await store.listRuns({ labels: ['m:customer=acme'] })).toEqual([]);
    await expect(runtime.get(run.id)).rejects.toMatchObject({ code: 'run.not_found' });
  });
});
