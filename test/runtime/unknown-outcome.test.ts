/**
 * A call whose outcome is unknown (a timeout, an unexpected throw, a cancel mid-call) is resolved
 * by its effect class, exactly as a crash mid-call is (docs/architecture.md §4), and an `unsafe`
 * effect never happens twice without a human's `retry`. Effects are counted in a file outside
 * Baton. Every suite runs on a SQLite file and on PostgreSQL.
 */
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createScriptedPlanner,
  defineTool,
  EFFECTS,
  ToolFailedError,
  type Effect,
  type Runtime,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable, type DialectName } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

/** How the first attempt misbehaves; later attempts record their effect and return. */
const MODES = ['timeout-after-effect', 'timeout-before-effect', 'throw-after-effect'] as const;
type Mode = (typeof MODES)[number] | 'hang' | 'always-timeout' | 'tool-failed';

function toolFor(effect: Effect, effects: string, timeoutMs = 150) {
  const record = (key: string) =>
    appendFileSync(effects, JSON.stringify({ tool: effect, key, value: '', pid: 0 }) + '\n');
  const happened = (key: string) => readEffects(effects).some((e) => e.key === key);
  return defineTool({
    name: 'world.act',
    description: `A ${effect} tool that records its effect outside Baton`,
    input: z.object({ mode: z.string() }),
    effect,
    risk: 'low',
    timeoutMs,
    execute: async ({ mode }, ctx) => {
      // An API honouring idempotency keys has no second effect for the same key.
      const act = () => {
        if (effect === 'idempotent' && happened(ctx.idempotencyKey)) return;
        record(ctx.idempotencyKey);
      };
      const aborted = () =>
        new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      if (ctx.attempt > 1 && mode !== 'always-timeout') {
        act();
        return { ok: true };
      }
      switch (mode) {
        case 'timeout-after-effect':
          act();
          await aborted();
          throw new Error('too slow');
        case 'timeout-before-effect':
        case 'hang':
        case 'always-timeout':
          // JavaScript cannot stop a promise: the effect still happens, after the abort.
          await aborted();
          act();
          throw new Error('aborted');
        case 'throw-after-effect':
          act();
          throw new Error('boom');
        case 'tool-failed':
          throw new ToolFailedError('the API said no');
      }
      return { ok: true };
    },
    ...(effect === 'reconcilable'
      ? {
          reconcile: (_input: { mode: string }, ctx: { idempotencyKey: string }) =>
            happened(ctx.idempotencyKey) ? { done: true as const, output: { ok: true } } : { done: false as const },
        }
      : {}),
  });
}

async function setup(dialect: DialectName, effect: Effect, mode: Mode, timeoutMs?: number) {
  const { database, effects } = await freshDatabaseOf(dialect);
  const planner = createScriptedPlanner((request) =>
    request.stepIndex === 0
      ? { type: 'tool_calls', calls: [{ tool: 'world.act', args: { mode } }] }
      : { type: 'final', answer: `saw: ${request.messages.at(-1)!.content}` },
  );
  const runtime = openRuntime({ database, planner, tools: [toolFor(effect, effects, timeoutMs)] });
  return { runtime, effects, planner };
}

async function ledgerOf(runtime: Runtime, runId: string) {
  return runtime.toolCalls(runId);
}

describe.each(ALL_DIALECTS)('unknown outcomes (timeout, throw) are resolved by effect class on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  for (const effect of EFFECTS) {
    for (const mode of MODES) {
      it(`resolves a ${effect} call after ${mode}`, async () => {
        const { runtime, effects } = await setup(dialect, effect, mode);
        const run = await runtime.start({ input: 'act' });
        const settled = await runtime.wait(run.id);
        const [call] = await ledgerOf(runtime, run.id);
        const happened = () => readEffects(effects).filter((e) => e.key === call!.id).length;
        const results = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'result');
        if (effect === 'read') {
          // A read's failure goes to the model, as before: nothing to protect.
          expect(settled.status).toBe('succeeded');
          expect(call).toMatchObject({ status: 'failed', attempts: 1 });
          expect(happened()).toBe(1);
          return;
        }
        expect(results[0]?.data).toMatchObject({
          status: 'unknown',
          cause: mode === 'throw-after-effect' ? 'threw' : 'timed_out',
        });
        if (effect === 'unsafe') {
          // Never again without a human: the run waits, and the model was told nothing.
          expect(settled).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
          expect(call).toMatchObject({ status: 'unknown', attempts: 1 });
          expect(happened()).toBe(1);
          const approval = (await runtime.approvals(run.id)).find((a) => a.status === 'pending')!;
          expect(approval).toMatchObject({ kind: 'uncertain', toolCallIds: [call!.id] });
          await runtime.approve(run.id, approval.id, { by: 'ops', resolution: 'done' });
          expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
          expect(happened()).toBe(1);
          expect((await ledgerOf(runtime, run.id))[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
          return;
        }
        expect(settled.status).toBe('succeeded');
        expect(happened()).toBe(1);
        if (effect === 'idempotent') {
          // Run again with the same idempotency key: the API has no second effect.
          expect(call).toMatchObject({ status: 'succeeded', attempts: 2 });
          const actions = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'action');
          expect(actions.map((a) => a.data.recovery ?? null)).toEqual([null, 'rerun']);
        } else {
          // Reconciled: found done, not run again.
          expect(call).toMatchObject({ status: 'succeeded', attempts: 1 });
          expect(results.at(-1)?.data).toMatchObject({ status: 'succeeded', recovery: 'reconciled' });
        }
      });
    }
  }

  it('sends an unsafe call a human chose to retry, and only then runs it again', async () => {
    const { runtime, effects } = await setup(dialect, 'unsafe', 'timeout-after-effect');
    const run = await runtime.start({ input: 'act' });
    const waiting = await runtime.wait(run.id);
    expect(readEffects(effects)).toHaveLength(1);
    await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'ops', resolution: 'retry' });
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
    expect(readEffects(effects)).toHaveLength(2);
    expect((await ledgerOf(runtime, run.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('asks a human once an idempotent call used up its attempts', async () => {
    const { runtime, effects } = await setup(dialect, 'idempotent', 'always-timeout', 60);
    const run = await runtime.start({ input: 'act' });
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
    const [call] = await ledgerOf(runtime, run.id);
    expect(call).toMatchObject({ status: 'unknown', attempts: 3 });
    // Three attempts with one key: one effect.
    expect(readEffects(effects)).toHaveLength(1);
    await runtime.reject(run.id, waiting.pendingApprovalId!, { by: 'ops', reason: 'gave up' });
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
    expect((await ledgerOf(runtime, run.id))[0]).toMatchObject({ status: 'failed' });
  });

  it('reports a ToolFailedError to the model: the tool said it did not take effect', async () => {
    const { runtime, effects } = await setup(dialect, 'unsafe', 'tool-failed');
    const run = await runtime.start({ input: 'act' });
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toContain('the API said no');
    expect((await ledgerOf(runtime, run.id))[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(readEffects(effects)).toHaveLength(0);
  });

  it('stores each attempt’s deadline with its started row', async () => {
    const { runtime } = await setup(dialect, 'idempotent', 'timeout-after-effect');
    const run = await runtime.start({ input: 'act' });
    await runtime.wait(run.id);
    const [call] = await ledgerOf(runtime, run.id);
    expect(call!.deadlineAt).toBe(call!.startedAt! + 150);
    const actions = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'action');
    expect(actions.map((a) => typeof a.data.deadline_at)).toEqual(['number', 'number']);
  });
});

describe.each(ALL_DIALECTS)('cancelling a run while a call runs on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  for (const effect of EFFECTS) {
    it(`settles a ${effect} call and says whether its outcome is unknown`, async () => {
      const { runtime, effects } = await setup(dialect, effect, 'hang', 60_000);
      const run = await runtime.start({ input: 'act' });
      // Wait for the call to be under way (its started row is in the ledger).
      await expect
        .poll(async () => (await ledgerOf(runtime, run.id))[0]?.status, { timeout: scaled(20_000) })
        .toBe('started');
      const cancelled = await runtime.cancel(run.id, { reason: 'stop' });
      expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
      const [call] = await ledgerOf(runtime, run.id);
      const events = await eventsOf(runtime, run.id);
      const last = events.at(-1)!;
      expect(last).toMatchObject({ type: 'state', data: { to: 'failed' } });
      const result = events.find((e) => e.type === 'result');
      expect(result?.seq).toBeLessThan(last.seq);
      if (effect === 'read') {
        expect(call).toMatchObject({ status: 'failed' });
        expect(cancelled.failure?.details?.unknown_tool_calls).toBeUndefined();
      } else {
        expect(call).toMatchObject({ status: 'unknown' });
        expect(result?.data).toMatchObject({ status: 'unknown', cause: 'aborted' });
        expect(cancelled.failure?.details?.unknown_tool_calls).toEqual([call!.id]);
        expect(last.data.unknown_tool_calls).toEqual([call!.id]);
      }
      // The aborted tool did its effect late; nothing ran it again.
      await expect.poll(() => readEffects(effects).length, { timeout: scaled(20_000) }).toBe(1);
      expect((await ledgerOf(runtime, run.id))[0]!.attempts).toBe(1);
    });
  }
});

describe.each(ALL_DIALECTS)('a reconcile() that cannot tell on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  /** A reconcilable tool whose first attempt times out after its effect, and whose reconcile() throws or hangs. */
  async function brokenReconcile(how: 'throws' | 'hangs') {
    const { database, effects } = await freshDatabaseOf(dialect);
    const record = (key: string) =>
      appendFileSync(effects, JSON.stringify({ tool: 'pay', key, value: '', pid: 0 }) + '\n');
    const tool = defineTool({
      name: 'world.pay',
      description: 'A reconcilable payment whose status API is down',
      input: z.object({ amount: z.number() }),
      effect: 'reconcilable',
      risk: 'low',
      timeoutMs: 150,
      execute: async (_input, ctx) => {
        record(ctx.idempotencyKey);
        if (ctx.attempt === 1) {
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          throw new Error('too slow');
        }
        return { paid: true };
      },
      reconcile: async (_input, ctx) => {
        if (how === 'throws') throw new Error('status API answered 502');
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        return { done: false as const };
      },
    });
    const planner = createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.pay', args: { amount: 5 } }] }
        : { type: 'final', answer: `saw: ${request.messages.at(-1)!.content}` },
    );
    return { runtime: openRuntime({ database, planner, tools: [tool] }), effects };
  }

  for (const how of ['throws', 'hangs'] as const) {
    it(`waits for a human with the reconcile error when reconcile() ${how}, and never runs the call again by itself`, async () => {
      const { runtime, effects } = await brokenReconcile(how);
      const run = await runtime.start({ input: 'pay' });
      const waiting = await runtime.wait(run.id);
      expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect', failure: null });
      expect(readEffects(effects)).toHaveLength(1);
      const [call] = await runtime.toolCalls(run.id);
      expect(call).toMatchObject({ status: 'unknown', attempts: 1 });
      const reconcileError = call!.result!.failure!.details!.reconcile_error as { message: string };
      expect(reconcileError.message).toMatch(how === 'throws' ? /status API answered 502/ : /timed out/);
      const request = (await eventsOf(runtime, run.id)).find((e) => e.type === 'approval_request');
      expect(request?.data).toMatchObject({
        reason: 'uncertain_side_effect',
        reconcile_error: { message: reconcileError.message },
      });
      // A human who checked by hand records it as done: it is not run again.
      await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'ops', resolution: 'done' });
      expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded' });
      expect(readEffects(effects)).toHaveLength(1);
    });
  }
});
