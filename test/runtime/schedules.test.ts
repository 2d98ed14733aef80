/**
 * Schedules on both dialects: ticks start runs (found by `baton.schedule` and `baton.tick`), each
 * tick one run; overlap `skip`, `enqueue` and `allow` while a run is active; ticks missed while no
 * runtime ran follow `catchUp`; pause, resume, delete and trigger; a one-shot `at`; cron in a
 * time zone; and the bad definitions refused before anything is stored.
 */
import { describe, expect, it } from 'vitest';
import type { BatonError } from '../../src/index.js';
import { createScriptedPlanner, type Planner, type Run, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { checkDefinition, dueTicks, tickAfter } from '../../src/runtime/model/schedules.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';

const answers: Planner = createScriptedPlanner(() => ({ type: 'final', answer: 'ticked' }));

/** The runs a schedule's ticks started, oldest tick first. */
async function runsOf(runtime: Runtime, id: string): Promise<Run[]> {
  const { runs } = await runtime.list({ metadata: { 'baton.schedule': id }, limit: 200 });
  return runs.sort((a, b) => Number(a.metadata['baton.tick']) - Number(b.metadata['baton.tick']));
}

const failureOf = async (promise: Promise<unknown>) => ((await promise.catch((e: unknown) => e)) as BatonError).failure;

describe.each(ALL_DIALECTS)('schedules (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('starts one run per tick, each found by its schedule and tick, a second apart', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({ database, planner: answers, tools: [] });
    const created = await runtime.schedule({ id: 'every-second', every: 1_000, input: 'tick', tags: ['cron'] });
    expect(created).toMatchObject({
      id: 'every-second',
      every: 1_000,
      status: 'active',
      overlap: 'skip',
      catchUp: 'none',
    });
    expect(created.nextAt).toBe(created.createdAt + 1_000);
    await waitUntil(async () => (await runsOf(runtime, 'every-second')).length >= 3, 'three ticks');
    const runs = await runsOf(runtime, 'every-second');
    const ticks = runs.map((r) => Number(r.metadata['baton.tick']));
    expect(ticks.slice(0, 3)).toEqual([1, 2, 3].map((k) => created.createdAt + k * 1_000));
    expect(runs[0]).toMatchObject({ input: 'tick', tags: ['cron'] });
    // The same definition again is the same schedule; another is a conflict that changes nothing.
    expect(
      (await runtime.schedule({ id: 'every-second', every: 1_000, input: 'tick', tags: ['cron'] })).createdAt,
    ).toBe(created.createdAt);
    expect(await failureOf(runtime.schedule({ id: 'every-second', every: 2_000, input: 'tick' }))).toMatchObject({
      code: 'schedule.conflict',
    });
    expect((await runtime.getSchedule('every-second')).every).toBe(1_000);
    await runtime.deleteSchedule('every-second');
    expect(await failureOf(runtime.getSchedule('every-second'))).toMatchObject({ code: 'schedule.not_found' });
  });

  it('skips a tick while its last run is active, enqueues it, or allows it, as overlap says', async () => {
    const { database } = await freshDatabaseOf(dialect);
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const planner: Planner = {
      async next() {
        await gate;
        return { decision: { type: 'final', answer: 'slow' }, usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const runtime = openRuntime({ database, planner, tools: [] });
    for (const overlap of ['skip', 'enqueue', 'allow'] as const) {
      await runtime.schedule({ id: overlap, every: 1_000, input: overlap, overlap });
    }
    // Three ticks while the first runs of each are held.
    await waitUntil(async () => {
      const all = await Promise.all(['skip', 'enqueue', 'allow'].map((id) => runtime.getSchedule(id)));
      return all.every((s) => s.lastTickAt !== null && s.lastTickAt >= s.createdAt + 3_000);
    }, 'three ticks of each');
    const skip = await runtime.getSchedule('skip');
    expect(skip.runs).toBe(1);
    expect(skip.skipped).toBeGreaterThanOrEqual(2);
    const enqueued = await runsOf(runtime, 'enqueue');
    expect(enqueued.length).toBeGreaterThanOrEqual(3);
    expect(enqueued.slice(1).every((r) => r.status === 'queued')).toBe(true);
    expect(new Set(enqueued.map((r) => r.sessionId))).toEqual(new Set(['schedule:enqueue']));
    const allowed = await runsOf(runtime, 'allow');
    expect(allowed.length).toBeGreaterThanOrEqual(3);
    expect(allowed.every((r) => r.status !== 'queued')).toBe(true);
    open();
    for (const run of [...enqueued, ...allowed]) await runtime.wait(run.id);
  });

  it('after a downtime, starts no run for the ticks missed with catchUp none, and one with catchUp one', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const options: RuntimeOptions = { database, planner: answers, tools: [] };
    const first = openRuntime(options);
    const none = await first.schedule({ id: 'none', every: 1_000, input: 'x', catchUp: 'none', overlap: 'allow' });
    await first.schedule({ id: 'one', every: 1_000, input: 'x', catchUp: 'one', overlap: 'allow' });
    await waitUntil(
      async () => (await first.getSchedule('one')).runs >= 1 && (await first.getSchedule('none')).runs >= 1,
      'a tick of each',
    );
    await first.close();
    const closedAt = Date.now();
    // Down for four ticks or more.
    await waitUntil(() => Date.now() >= closedAt + 4_500, 'four ticks of downtime');
    const again = openRuntime(options);
    await waitUntil(
      async () =>
        (await again.getSchedule('none')).nextAt! > Date.now() - 500 &&
        (await again.getSchedule('one')).nextAt! > Date.now() - 500,
      'the late ticks taken',
    );
    for (const id of ['none', 'one']) {
      const ticks = (await runsOf(again, id)).map((r) => Number(r.metadata['baton.tick']));
      const before = ticks.filter((t) => t <= closedAt);
      const after = ticks.filter((t) => t > closedAt);
      const lastBefore = Math.max(...before);
      const current = (await again.getSchedule(id)).lastTickAt!;
      // Between the last tick before the downtime and the first after it: nothing, or one run.
      const between = after.filter((t) => t > lastBefore && t < current);
      expect(current - lastBefore).toBeGreaterThanOrEqual(4_000);
      expect(between).toEqual(id === 'none' ? [] : [current - 1_000]);
      expect(after).toContain(current);
      expect(new Set(ticks).size).toBe(ticks.length);
    }
    expect((await again.getSchedule('none')).skipped).toBeGreaterThanOrEqual(3);
    expect(none.catchUp).toBe('none');
  });

  it('pauses (no ticks), resumes from now, triggers a run at once, and fires a one-shot once', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({ database, planner: answers, tools: [] });
    await runtime.schedule({ id: 'p', every: 1_000, input: 'x' });
    const paused = await runtime.pauseSchedule('p');
    expect(paused).toMatchObject({ status: 'paused', nextAt: null });
    const triggered = await runtime.triggerSchedule('p');
    expect(triggered.metadata['baton.schedule']).toBe('p');
    expect((await runtime.wait(triggered.id)).status).toBe('succeeded');
    expect((await runtime.getSchedule('p')).runs).toBe(1);
    const resumed = await runtime.resumeSchedule('p');
    expect(resumed.status).toBe('active');
    expect(resumed.nextAt!).toBeGreaterThan(Date.now() - 1_000);
    const once = await runtime.schedule({ id: 'once', at: new Date(Date.now() + 300).toISOString(), input: 'x' });
    expect(once.status).toBe('active');
    await waitUntil(async () => (await runtime.getSchedule('once')).status === 'done', 'the one-shot fired');
    expect(await runsOf(runtime, 'once')).toHaveLength(1);
    expect(await failureOf(runtime.pauseSchedule('once'))).toMatchObject({ code: 'schedule.invalid_transition' });
    expect((await runtime.listSchedules()).map((s) => s.id)).toEqual(['once', 'p']);
    // Tenant-scoped ids: another tenant's schedule of the same id is another schedule.
    await runtime.schedule({ id: 'p', every: 5_000, input: 'y', context: { tenant_id: 'acme' } });
    expect((await runtime.getSchedule('p', { tenant: 'acme' })).every).toBe(5_000);
    expect((await runtime.listSchedules({ tenant: 'acme' })).map((s) => s.id)).toEqual(['p']);
  });

  it('refuses bad definitions, naming what is wrong, and stores nothing', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({ database, planner: answers, tools: [] });
    const bad = [
      [{ id: 'c', cron: '61 * * * *', input: 'x' }, "Cron expression '61 * * * *' does not parse"],
      [
        { id: 'c', cron: '0 9 * * *', timezone: 'Mars/Olympus', input: 'x' },
        'Time zone "Mars/Olympus" is not an IANA time zone',
      ],
      [{ id: 'c', cron: '0 0 30 2 *', input: 'x' }, "Cron expression '0 0 30 2 *' never ticks"],
      [
        { id: 'c', every: '2000', input: 'x' },
        'every must be a whole number of milliseconds, 1000 or more (got "2000")',
      ],
      [{ id: 'c', every: 1_000, input: 'x', catch_up: 'one' }, 'A schedule has no catch_up'],
      [{ id: 'c', every: 1_000, input: 'x', context: 'nope' }, 'context must be an object'],
      [{ id: 'c', every: 1_000, input: 'x', options: { budget: 'lots' } }, 'Invalid start request'],
      [{ id: 'c', every: 1_000, input: 'x', tags: 'a' }, 'tags'],
      [{ id: 'c', every: 1_000, input: 'x', metadata: { n: { nested: true } } }, 'metadata'],
      [{ id: 'c', input: 'x' }, 'exactly one of cron, every and at'],
      [{ id: 'c', every: 1_000, cron: '* * * * *', input: 'x' }, 'exactly one of cron, every and at'],
      [{ id: 'c', every: 10, input: 'x' }, 'every must be a whole number of milliseconds, 1000 or more'],
      [{ id: 'c', every: 1_000, input: 'x', overlap: 'sometimes' }, 'overlap must be one of skip, enqueue, allow'],
      [{ id: 'c', every: 1_000, input: 'x', catchUp: 'all' }, 'catchUp must be one of none, one'],
      [{ id: 'c', at: 'tomorrow', input: 'x' }, "Schedule 'c': at must be an instant"],
      [{ id: '', every: 1_000, input: 'x' }, 'id of 1-128 characters'],
    ] as const;
    for (const [definition, message] of bad) {
      const failure = await failureOf(runtime.schedule(definition as never));
      expect(failure.code).toBe('input.invalid');
      expect(failure.message).toContain(message);
    }
    expect(await runtime.listSchedules()).toEqual([]);
  });
});

describe('schedule ticks', () => {
  it('follow a cron expression in its time zone', () => {
    const nine = checkDefinition({ id: 'n', cron: '0 9 * * *', timezone: 'Europe/Paris', input: 'x' });
    // 09:00 in Paris is 08:00 UTC in winter, 07:00 UTC in summer.
    expect(new Date(tickAfter(nine, Date.parse('2026-12-05T10:00:00Z'), 0)!).toISOString()).toBe(
      '2026-12-06T08:00:00.000Z',
    );
    expect(new Date(tickAfter(nine, Date.parse('2026-07-01T10:00:00Z'), 0)!).toISOString()).toBe(
      '2026-07-02T07:00:00.000Z',
    );
    const every = checkDefinition({ id: 'e', every: 60_000, input: 'x' });
    expect(tickAfter(every, 1_000_000 + 59_999, 1_000_000)).toBe(1_060_000);
    expect(tickAfter(every, 1_060_000, 1_000_000)).toBe(1_120_000);
  });

  it('count a tick as missed once a later one is due too, or once it is more than a minute late', () => {
    const daily = checkDefinition({ id: 'd', cron: '0 9 * * *', input: 'x' });
    const nine = Date.parse('2026-12-05T09:00:00Z');
    // Taken a second late: on time.
    expect(dueTicks(daily, nine, nine + 1_000, 0)).toMatchObject({ current: nine, missed: null, missedCount: 0 });
    // Three hours late (a downtime): missed, though the next one is not due yet.
    expect(dueTicks(daily, nine, nine + 3 * 3_600_000, 0)).toMatchObject({
      current: null,
      missed: nine,
      missedCount: 1,
      next: Date.parse('2026-12-06T09:00:00Z'),
    });
    const every = checkDefinition({ id: 'e', every: 1_000, input: 'x' });
    // Ten seconds down: nine missed, the last one due is on time.
    expect(dueTicks(every, 1_000, 10_500, 0)).toEqual({ current: 10_000, missed: 9_000, missedCount: 9, next: 11_000 });
  });
});
