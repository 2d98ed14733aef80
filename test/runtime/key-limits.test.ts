/**
 * Per-key limits, on both dialects: a tool's `concurrency` and `rate` per key (from its arguments),
 * a 429 that backs the key off for every call, limits on planner calls, and a per-tenant cap on
 * runs in flight. A call over a limit waits before it starts (a committed `throttled` event), runs
 * exactly once, and the limits hold across two runtimes on one database.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BatonError,
  createRuntime,
  createScriptedPlanner,
  defineTool,
  ToolRateLimitedError,
  type Planner,
  type Run,
  type Runtime,
  type RuntimeOptions,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';

/** A planner whose step 0 calls `tool` with the run's input as `key`, then answers. */
function callOnce(tool: string): Planner {
  return {
    async next(request) {
      if (request.stepIndex > 0)
        return { decision: { type: 'final', answer: 'done' }, usage: { inputTokens: 1, outputTokens: 1 } };
      return {
        decision: { type: 'tool_calls', calls: [{ tool, args: { key: request.input } }] },
        usage: { inputTokens: 1, outputTokens: 1 },
      };
    },
  };
}

/** A tool that counts its calls in flight per key (and the most at once), held until `open()`. */
function countingTool(extra: Partial<Parameters<typeof defineTool<{ key: string }, unknown>>[0]> = {}) {
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const calls = new Map<string, number>();
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const tool = defineTool({
    name: 'api.call',
    description: 'Calls a rate-limited API for a key',
    input: z.object({ key: z.string() }),
    effect: 'idempotent',
    risk: 'low',
    ...extra,
    execute: async ({ key }, ctx) => {
      calls.set(ctx.toolCallId, (calls.get(ctx.toolCallId) ?? 0) + 1);
      const now = (running.get(key) ?? 0) + 1;
      running.set(key, now);
      most.set(key, Math.max(most.get(key) ?? 0, now));
      try {
        await gate;
        return { key };
      } finally {
        running.set(key, running.get(key)! - 1);
      }
    },
  });
  return { tool, running, most, calls, open: () => open() };
}

async function throttledOf(runtime: Runtime, runId: string) {
  return (await eventsOf(runtime, runId)).filter((e) => e.type === 'throttled');
}

describe.each(ALL_DIALECTS)('per-key limits (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('lets at most `limit` calls of a key run at once, across two runtimes; the others wait, told, and each runs once', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const counting = countingTool({ concurrency: { limit: 2, key: ({ key }) => key } });
    const options: RuntimeOptions = { database, planner: callOnce('api.call'), tools: [counting.tool] };
    const a = openRuntime(options);
    const b = openRuntime(options);
    await Promise.all([a.ready, b.ready]);
    const runs = await Promise.all([
      ...['x', 'x', 'x'].map((input) => a.start({ input })),
      ...['x', 'x', 'y'].map((input) => b.start({ input })),
    ]);
    const runtimeOf = (i: number) => (i < 3 ? a : b);
    // Two of key x run, one of key y; the three other calls of x wait, each told why.
    await waitUntil(async () => {
      const told = await Promise.all(runs.map(async (run, i) => (await throttledOf(runtimeOf(i), run.id)).length));
      return (
        counting.running.get('x') === 2 && counting.running.get('y') === 1 && told.filter((n) => n > 0).length === 3
      );
    }, 'two calls of x running, one of y, three told they wait');
    const waiting = (
      await Promise.all(runs.map(async (run, i) => (await throttledOf(runtimeOf(i), run.id))[0]))
    ).filter((e) => e !== undefined);
    for (const event of waiting) {
      expect(event.data).toMatchObject({ tool: 'api.call', limit: 'concurrency', key: 'x' });
      expect(typeof event.data.tool_call_id).toBe('string');
    }
    // A waiting run is still executing: its call has not started (no `started` row, no action event).
    for (const [i, run] of runs.entries()) {
      if ((await throttledOf(runtimeOf(i), run.id)).length === 0) continue;
      expect((await runtimeOf(i).get(run.id)).status).toBe('executing');
      expect((await eventsOf(runtimeOf(i), run.id)).some((e) => e.type === 'action')).toBe(false);
    }
    counting.open();
    for (const [i, run] of runs.entries()) expect((await runtimeOf(i).wait(run.id)).status).toBe('succeeded');
    expect(counting.most.get('x')).toBe(2);
    expect(counting.most.get('y')).toBe(1);
    expect([...counting.calls.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    // Every slot given back.
    const { openStore } = await import('../../src/store/index.js');
    const peek = openStore(database);
    await peek.opened;
    expect(await peek.store.heldSlots('tool:api.call:c:x')).toEqual([]);
    await peek.store.close();
  });

  it('starts at most `limit` calls of a key in any window of the interval; a call waiting its turn can be cancelled', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const starts: string[] = [];
    const limited = (limit: number, intervalMs: number) =>
      defineTool({
        name: 'api.call',
        description: `Calls an API limited to ${limit} calls per ${intervalMs} ms`,
        input: z.object({ key: z.string() }),
        effect: 'read',
        risk: 'low',
        rate: { limit, intervalMs, key: ({ key }) => key },
        execute: ({ key }) => {
          starts.push(key);
          return 'ok';
        },
      });
    // Two turns a minute: the third call of the key waits, and is still waiting when cancelled.
    const runtime = openRuntime({ database, planner: callOnce('api.call'), tools: [limited(2, 60_000)] });
    const runs: Run[] = [];
    for (let i = 0; i < 3; i += 1) runs.push(await runtime.start({ input: 'k' }));
    const other = await runtime.start({ input: 'other' });
    await waitUntil(async () => (await throttledOf(runtime, runs[2]!.id)).length > 0, 'the third call told it waits');
    for (const run of [runs[0]!, runs[1]!, other]) expect((await runtime.wait(run.id)).status).toBe('succeeded');
    const [told] = await throttledOf(runtime, runs[2]!.id);
    expect(told!.data).toMatchObject({ limit: 'rate', key: 'k' });
    expect(told!.data.retry_in_ms).toBeGreaterThan(0);
    // The wait left, with the spread of up to 20 ms that keeps waiters from asking at once.
    expect(told!.data.retry_in_ms).toBeLessThanOrEqual(60_021);
    expect((await runtime.get(runs[2]!.id)).status).toBe('executing');
    await runtime.cancel(runs[2]!.id, { reason: 'no turn' });
    expect((await runtime.wait(runs[2]!.id)).status).toBe('failed');
    expect(starts).toEqual(['k', 'k', 'other']);
    // Its call never started: no action, no ledger row beyond the plan.
    expect((await eventsOf(runtime, runs[2]!.id)).some((e) => e.type === 'action')).toBe(false);
    // A short interval: every call gets its turn in the end.
    await runtime.close();
    const again = openRuntime({ database, planner: callOnce('api.call'), tools: [limited(1, 100)] });
    const more = await Promise.all(Array.from({ length: 4 }, () => again.start({ input: 'q' })));
    for (const run of more) expect((await again.wait(run.id)).status).toBe('succeeded');
    expect(starts.filter((key) => key === 'q')).toHaveLength(4);
  });

  it('backs a key off for every call after a 429, and the refused call tries again: its effect once', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const effects: string[] = [];
    let refused = false;
    let refusedAt = 0;
    const startedAfter: number[] = [];
    const tool = defineTool({
      name: 'api.call',
      description: 'Answers 429 once',
      input: z.object({ key: z.string() }),
      effect: 'idempotent',
      risk: 'low',
      concurrency: { limit: 5 },
      execute: (_input, ctx) => {
        if (!refused) {
          refused = true;
          refusedAt = Date.now();
          throw new ToolRateLimitedError('429 Too Many Requests', { retryAfterMs: 400 });
        }
        startedAfter.push(Date.now() - refusedAt);
        effects.push(ctx.idempotencyKey);
        return 'ok';
      },
    });
    const runtime = openRuntime({ database, planner: callOnce('api.call'), tools: [tool] });
    const first = await runtime.start({ input: 'k' });
    await waitUntil(() => refused, 'the first call refused with a 429');
    const others = await Promise.all([runtime.start({ input: 'k' }), runtime.start({ input: 'k' })]);
    for (const run of [first, ...others]) expect((await runtime.wait(run.id)).status).toBe('succeeded');
    // Each call's effect once; none started before the back-off was over.
    expect(effects).toHaveLength(3);
    expect(new Set(effects).size).toBe(3);
    expect(Math.min(...startedAfter)).toBeGreaterThanOrEqual(400 - 15);
    const firstTold = await throttledOf(runtime, first.id);
    expect(firstTold.map((e) => e.data.limit)).toEqual(['backoff']);
    expect(firstTold[0]!.data.retry_in_ms).toBe(400);
    const result = (await eventsOf(runtime, first.id)).filter((e) => e.type === 'result');
    expect(result).toHaveLength(1);
    expect(result[0]!.data.status).toBe('succeeded');
  });

  it('honours a 429 of a tool without limits for the refused call alone, and tells an unsafe call it is not retried', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const attempts: { tool: string; at: number }[] = [];
    const refusing = (name: string, effect: 'idempotent' | 'unsafe') =>
      defineTool({
        name,
        description: 'Answers 429 first',
        input: z.object({ key: z.string() }),
        effect,
        risk: 'low',
        execute: () => {
          attempts.push({ tool: name, at: Date.now() });
          if (attempts.filter((a) => a.tool === name).length === 1) {
            throw new ToolRateLimitedError('429', { retryAfterMs: 300 });
          }
          return 'ok';
        },
      });
    const runtime = openRuntime({
      database,
      planner: {
        async next(request) {
          const usage = { inputTokens: 1, outputTokens: 1 };
          if (request.stepIndex > 0) return { decision: { type: 'final', answer: 'done' }, usage };
          return { decision: { type: 'tool_calls', calls: [{ tool: request.input, args: { key: 'k' } }] }, usage };
        },
      },
      tools: [refusing('plain.call', 'idempotent'), refusing('risky.call', 'unsafe')],
    });
    const plain = await runtime.start({ input: 'plain.call' });
    expect((await runtime.wait(plain.id)).status).toBe('succeeded');
    const [first, second] = attempts.filter((a) => a.tool === 'plain.call');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(300);
    expect((await throttledOf(runtime, plain.id)).map((e) => e.data)).toEqual([
      expect.objectContaining({ limit: 'backoff', retry_in_ms: 300 }),
    ]);
    const risky = await runtime.start({ input: 'risky.call' });
    await runtime.wait(risky.id);
    expect(attempts.filter((a) => a.tool === 'risky.call')).toHaveLength(1);
    expect((await throttledOf(runtime, risky.id)).map((e) => e.data.retry_in_ms)).toEqual([null]);
  });

  it('fails a call whose key function throws or gives no string or number, telling the model', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const keyed = (name: string, key: (input: { key: string }) => unknown) =>
      defineTool({
        name,
        description: 'Keyed badly',
        input: z.object({ key: z.string() }),
        effect: 'read',
        risk: 'low',
        concurrency: { limit: 1, key: key as never },
        execute: () => 'ran',
      });
    const runtime = openRuntime({
      database,
      planner: {
        async next(request) {
          const usage = { inputTokens: 1, outputTokens: 1 };
          if (request.stepIndex > 0) return { decision: { type: 'final', answer: 'done' }, usage };
          return { decision: { type: 'tool_calls', calls: [{ tool: request.input, args: { key: 'k' } }] }, usage };
        },
      },
      tools: [
        keyed('throws.key', () => {
          throw new Error('no tenant');
        }),
        keyed('object.key', () => ({ tenant: 'a' })),
      ],
    });
    for (const [tool, message] of [
      ['throws.key', "The limit key of tool 'throws.key' failed: no tenant"],
      ['object.key', 'concurrency.key must return a string or a number (or nothing), not object'],
    ] as const) {
      const run = await runtime.start({ input: tool });
      await runtime.wait(run.id);
      const result = (await eventsOf(runtime, run.id)).find((e) => e.type === 'result')!;
      expect(result.data.status).toBe('failed');
      expect(JSON.stringify(result.data)).toContain(message);
    }
  });

  it('lets at most `limit` planner calls of a key run at once', async () => {
    const { database } = await freshDatabaseOf(dialect);
    let running = 0;
    let most = 0;
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const planner: Planner = {
      async next() {
        running += 1;
        most = Math.max(most, running);
        await gate;
        running -= 1;
        return { decision: { type: 'final', answer: 'done' }, usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const runtime = openRuntime({
      database,
      planner,
      tools: [],
      limits: { planner: { concurrency: { limit: 1, key: ({ context }) => String(context.tenant_id) } } },
    });
    const runs = await Promise.all([
      runtime.start({ input: 'a', context: { tenant_id: 't1' } }),
      runtime.start({ input: 'b', context: { tenant_id: 't1' } }),
      runtime.start({ input: 'c', context: { tenant_id: 't2' } }),
    ]);
    await waitUntil(
      async () =>
        running === 2 &&
        (await throttledOf(runtime, runs[1]!.id)).length + (await throttledOf(runtime, runs[0]!.id)).length === 1,
      'one planner call per tenant, the second of t1 told it waits',
    );
    const told = [...(await throttledOf(runtime, runs[0]!.id)), ...(await throttledOf(runtime, runs[1]!.id))][0]!;
    expect(told.data).toMatchObject({ planner: 'default', step_index: 0, limit: 'concurrency', key: 't1' });
    open();
    for (const run of runs) expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(most).toBe(2);
  });

  it('refuses a start over the tenant cap, run.tenant_limit, leaving nothing; other tenants and later starts pass', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const counting = countingTool();
    const options: RuntimeOptions = {
      database,
      planner: callOnce('api.call'),
      tools: [counting.tool],
      limits: { runsPerTenant: 2 },
    };
    const a = openRuntime(options);
    const b = openRuntime(options);
    const t1 = { context: { tenant_id: 't1' } };
    const held = [await a.start({ input: 'k', ...t1 }), await b.start({ input: 'k', ...t1 })];
    const refusal = await a.start({ input: 'k', ...t1, sessionId: 'over' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(BatonError);
    expect((refusal as BatonError).failure).toMatchObject({
      code: 'run.tenant_limit',
      details: { tenant_id: 't1', runs_per_tenant: 2 },
    });
    // Nothing of it written: the session it named has no run.
    expect((await a.list({ sessionId: 'over' })).runs).toEqual([]);
    expect((await a.list({})).runs).toHaveLength(2);
    // Two starts at once from two runtimes: never both past the cap.
    const other = await Promise.allSettled([
      a.start({ input: 'k', context: { tenant_id: 't2' } }),
      b.start({ input: 'k', context: { tenant_id: 't2' } }),
      a.start({ input: 'k', context: { tenant_id: 't2' } }),
    ]);
    expect(other.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    counting.open();
    for (const run of held) await a.wait(run.id);
    const later = await a.start({ input: 'k', ...t1 });
    expect((await a.wait(later.id)).status).toBe('succeeded');
  });

  it('refuses limits that are not positive whole numbers', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const base = {
      name: 'x',
      description: 'x',
      input: z.object({}),
      effect: 'read' as const,
      risk: 'low' as const,
      execute: () => 1,
    };
    for (const bad of [
      { concurrency: { limit: 0 } },
      { concurrency: { limit: -1 } },
      { concurrency: { limit: 1.5 } },
      { rate: { limit: 2 } },
      { rate: { limit: 2, intervalMs: 0 } },
      { concurrency: { limit: 1, key: 'tenant' } },
      { concurrency: { limit: 1, keys: () => 'a' } },
      { rate: { limit: 1, intervalMs: 10, per: 'second' } },
    ]) {
      expect(() => defineTool({ ...base, ...(bad as object) })).toThrow(
        expect.objectContaining({ failure: expect.objectContaining({ code: 'input.invalid' }) }),
      );
    }
    for (const limits of [
      { runsPerTenant: 0 },
      { runsPerTenant: '5' },
      { planner: { rate: { limit: 1, intervalMs: -5 } } },
      { planner: 4 },
      { planner: { concurrency: { limit: 1 }, tools: 2 } },
      { tools: { limit: 1 } },
    ]) {
      expect(() =>
        createRuntime({ database, planner: createScriptedPlanner([]), tools: [], limits: limits as never }),
      ).toThrow(expect.objectContaining({ failure: expect.objectContaining({ code: 'input.invalid' }) }));
    }
  });
});
