/**
 * Compensation: a cancel or a terminating rejection that asks for it undoes the run's completed
 * non-`read` calls with a compensator, newest first, each journaled in the ledger with
 * `compensation` events, before the run ends `failed`; what cannot be undone is listed. On a
 * SQLite file and on PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, defineTool, type Runtime } from '../../src/index.js';
import { z } from 'zod';
import { createShop, readShop, SHOP_SCRIPT, type ShopOptions } from '../helpers/shop.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable, type DialectName } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';

/** A run of the shop script, waiting for the approval of its deletion (four calls done). */
async function waitingShop(dialect: DialectName, options: ShopOptions = {}) {
  const { database, effects: journal } = await freshDatabaseOf(dialect);
  const runtime: Runtime = openRuntime({
    database,
    planner: createScriptedPlanner(SHOP_SCRIPT),
    tools: createShop(journal, options),
  });
  const run = await runtime.start({ input: 'handle orders A and B' });
  const waiting = await runtime.wait(run.id);
  expect(waiting.status).toBe('waiting_human');
  return { runtime, runId: run.id, journal, approvalId: waiting.pendingApprovalId! };
}

describe.each(ALL_DIALECTS)('compensation on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('undoes the completed calls newest first on cancel, journaled in the ledger, before the run ends cancelled', async () => {
    const { runtime, runId, journal } = await waitingShop(dialect);
    const calls = await runtime.toolCalls(runId);
    const id = (tool: string, order: string) =>
      calls.find((c) => c.tool === tool && (c.args as { order: string }).order === order)!.id;

    const answered = await runtime.cancel(runId, { reason: 'customer withdrew', compensate: true });
    expect(answered.compensation?.status).toMatch(/compensating|done/);
    const run = await runtime.wait(runId);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'cancelled', failure: { code: 'run.cancelled' } });
    expect(run.compensation).toEqual({
      reason: 'cancelled',
      status: 'done',
      // Newest first: the second charge, the archive, the first charge.
      compensated: [
        { toolCallId: id('shop.charge', 'B'), tool: 'shop.charge' },
        { toolCallId: id('shop.archive', 'A'), tool: 'shop.archive' },
        { toolCallId: id('shop.charge', 'A'), tool: 'shop.charge' },
      ],
      failed: [],
      // The unsafe notification has no compensator; the read-only lookup is not a candidate.
      notCompensated: [{ toolCallId: id('shop.notify', 'A'), tool: 'shop.notify', reason: 'no_compensator' }],
    });
    // The world: each effect undone once, in reverse order.
    const undone = readShop(journal).filter((l) => l.kind === 'refund' || l.kind === 'restore');
    expect(undone.map((l) => `${l.kind} ${l.order}`)).toEqual(['refund B', 'restore A', 'refund A']);
    expect(readShop(journal).filter((l) => l.kind === 'delete')).toHaveLength(0);

    // The ledger: one row per compensation, pointing at the call it undoes.
    const ledger = await runtime.toolCalls(runId);
    const rows = ledger.filter((c) => c.compensates !== null);
    expect(rows.map((c) => [c.compensates, c.status, c.effect])).toEqual(
      expect.arrayContaining([
        [id('shop.charge', 'B'), 'succeeded', 'idempotent'],
        [id('shop.archive', 'A'), 'succeeded', 'reconcilable'],
        [id('shop.charge', 'A'), 'succeeded', 'idempotent'],
        [id('shop.notify', 'A'), 'skipped', null],
      ]),
    );
    expect(rows).toHaveLength(4);
    // The events: each compensation started and ended, newest first, before the run's last state.
    const events = await eventsOf(runtime, runId);
    const comp = events
      .filter((e) => e.type === 'compensation')
      .map((e) => `${String(e.data.status)} ${String(e.data.compensates)}`);
    expect(comp).toEqual([
      `started ${id('shop.charge', 'B')}`,
      `succeeded ${id('shop.charge', 'B')}`,
      `skipped ${id('shop.notify', 'A')}`,
      `started ${id('shop.archive', 'A')}`,
      `succeeded ${id('shop.archive', 'A')}`,
      `started ${id('shop.charge', 'A')}`,
      `succeeded ${id('shop.charge', 'A')}`,
    ]);
    const states = events.filter((e) => e.type === 'state').map((e) => `${String(e.data.from)}>${String(e.data.to)}`);
    expect(states.slice(-2)).toEqual(['waiting_human>executing', 'executing>failed']);
    const last = events.findLast((e) => e.type === 'state')!;
    expect(last.data.compensation).toMatchObject({ status: 'done', compensated: expect.any(Array) });
    expect(events.findLastIndex((e) => e.type === 'compensation')).toBeLessThan(events.indexOf(last));
    // The trace: a span per compensation (the skipped one too, without duration).
    const trace = await runtime.trace(runId);
    const undoSpans = trace.spans.filter((s) => s.kind === 'compensation');
    expect(undoSpans.map((s) => [s.name, s.attributes.status])).toEqual([
      ['undo shop.charge', 'succeeded'],
      ['undo shop.notify', 'skipped'],
      ['undo shop.archive', 'succeeded'],
      ['undo shop.charge', 'succeeded'],
    ]);
    // Each compensator knew the call it undid; its own key is that call's id with `.undo`.
    const undoCalls = readShop(journal).filter((l) => l.kind === 'undo_call');
    expect(undoCalls.map((l) => [l.of, l.key])).toEqual(
      [id('shop.charge', 'B'), id('shop.archive', 'A'), id('shop.charge', 'A')].map((c) => [c, `${c}.undo`]),
    );
    // The compensators got the call's input and recorded output.
    const refundB = ledger.find((c) => c.compensates === id('shop.charge', 'B'))!;
    expect(refundB.result!.content).toEqual({ refunded: 'B' });
  });

  it('a rejection with terminate and compensate undoes the run before it ends rejected', async () => {
    const { runtime, runId, journal, approvalId } = await waitingShop(dialect);
    await runtime.reject(runId, approvalId, { by: 'alice', terminate: true, compensate: true });
    const run = await runtime.wait(runId);
    expect(run).toMatchObject({
      status: 'failed',
      stopReason: 'rejected',
      compensation: { reason: 'rejected', status: 'done' },
    });
    expect(run.compensation!.compensated).toHaveLength(3);
    expect(readShop(journal).filter((l) => l.kind === 'refund')).toHaveLength(2);
    expect((await runtime.approvals(runId)).find((a) => a.id === approvalId)).toMatchObject({
      status: 'rejected',
      resolution: 'compensate',
    });
  });

  it('a compensator that fails is recorded and the run still ends; the other calls are still undone', async () => {
    const { runtime, runId, journal } = await waitingShop(dialect, { failRefund: 'failed' });
    await runtime.cancel(runId, { compensate: true });
    const run = await runtime.wait(runId);
    expect(run.status).toBe('failed');
    expect(run.compensation!.compensated.map((c) => c.tool)).toEqual(['shop.archive']);
    expect(run.compensation!.failed.map((c) => [c.tool, c.failure.code, c.failure.message])).toEqual([
      ['shop.charge', 'tool.failed', expect.stringContaining('the bank refused the refund of B')],
      ['shop.charge', 'tool.failed', expect.stringContaining('the bank refused the refund of A')],
    ]);
    // A known failure is not tried again.
    expect(readShop(journal).filter((l) => l.kind === 'undo_call' && l.tool === 'shop.charge')).toHaveLength(2);
    const failed = (await runtime.toolCalls(runId)).filter((c) => c.compensates && c.status === 'failed');
    expect(failed).toHaveLength(2);
  });

  it('a compensator that throws (outcome unknown) is tried again with the same key, then listed', async () => {
    const { runtime, runId, journal } = await waitingShop(dialect, { failRefund: 'throw' });
    await runtime.cancel(runId, { compensate: true });
    const run = await runtime.wait(runId);
    expect(run.status).toBe('failed');
    expect(run.compensation!.failed.map((c) => c.failure.code)).toEqual([
      'tool.outcome_unknown',
      'tool.outcome_unknown',
    ]);
    const tries = readShop(journal).filter((l) => l.kind === 'undo_call' && l.tool === 'shop.charge');
    // Three attempts per refund, each with its compensation's own key.
    expect(tries.map((l) => l.attempt)).toEqual([1, 2, 3, 1, 2, 3]);
    expect(new Set(tries.slice(0, 3).map((l) => l.key)).size).toBe(1);
  });

  it('cancelled mid-call: the interrupted call is left (unknown outcome), the earlier ones are undone', async () => {
    const { database, effects: journal } = await freshDatabaseOf(dialect);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = defineTool({
      name: 'shop.ship',
      description: 'Ship an order (slow)',
      input: z.object({ order: z.string() }),
      effect: 'unsafe',
      risk: 'low',
      compensate: () => 'recalled',
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          started();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    });
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'shop.charge', args: { order: 'C' } }] },
        { type: 'tool_calls', calls: [{ tool: 'shop.ship', args: { order: 'C' } }] },
      ]),
      tools: [...createShop(journal), slow],
    });
    const { id: runId } = await runtime.start({ input: 'ship C' });
    await running;
    await runtime.cancel(runId, { compensate: true });
    const run = await runtime.wait(runId);
    expect(run.status).toBe('failed');
    expect(run.compensation!.compensated.map((c) => c.tool)).toEqual(['shop.charge']);
    expect(run.compensation!.notCompensated).toEqual([
      { toolCallId: expect.any(String), tool: 'shop.ship', reason: 'outcome_unknown' },
    ]);
    const ship = (await runtime.toolCalls(runId)).find((c) => c.tool === 'shop.ship' && c.compensates === null)!;
    expect(ship.status).toBe('unknown');
  });

  it('a second cancel while compensating ends the run at once: the compensation is stopped, the one in flight unknown', async () => {
    const { runtime, runId, journal } = await waitingShop(dialect, { hangAfterUndo: 'shop.charge' });
    await runtime.cancel(runId, { compensate: true });
    await waitUntil(() => readShop(journal).some((l) => l.kind === 'refund'), 'the first refund');
    expect((await runtime.get(runId)).compensation).toMatchObject({ status: 'compensating', compensated: [] });
    await runtime.cancel(runId, { reason: 'enough' });
    const run = await runtime.wait(runId);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'cancelled', compensation: { status: 'stopped' } });
    const inFlight = (await runtime.toolCalls(runId)).find((c) => c.compensates !== null)!;
    expect(inFlight.status).toBe('unknown');
    expect(run.failure!.details).toMatchObject({ unknown_tool_calls: [inFlight.id] });
    // Nothing older was undone.
    expect(
      readShop(journal)
        .filter((l) => l.kind === 'refund')
        .map((l) => l.order),
    ).toEqual(['B']);
  });

  it('a call a human recorded as done is compensated with no output, knowing which call it undoes', async () => {
    const { database, effects: journal } = await freshDatabaseOf(dialect);
    const seen: unknown[] = [];
    const send = defineTool({
      name: 'mail.send',
      description: 'Send a mail (its first attempt never answers)',
      input: z.object({ to: z.string() }),
      effect: 'unsafe',
      risk: 'low',
      // A limit the held call cannot meet: the tool's configured timeout, not a wait of the test.
      timeoutMs: 200,
      execute: () => new Promise(() => undefined),
      compensate: (input, output, ctx) => {
        seen.push({ input, output, compensates: ctx.compensates });
        return 'apology sent';
      },
    });
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'mail.send', args: { to: 'ops@example.com' } }] },
        { type: 'tool_calls', calls: [{ tool: 'shop.delete', args: { order: 'Z' } }] },
      ]),
      tools: [send, ...createShop(journal)],
    });
    const { id: runId } = await runtime.start({ input: 'mail, then delete' });
    const uncertain = await runtime.wait(runId);
    expect(uncertain.waitReason).toBe('uncertain_side_effect');
    await runtime.approve(runId, uncertain.pendingApprovalId!, { by: 'ops', resolution: 'done' });
    expect((await runtime.wait(runId)).waitReason).toBe('approval');
    await runtime.cancel(runId, { compensate: true });
    const run = await runtime.wait(runId);
    const [mail] = await runtime.toolCalls(runId);
    expect(mail!.result).toMatchObject({ recordedBy: 'ops' });
    expect(run.compensation!.compensated).toEqual([{ toolCallId: mail!.id, tool: 'mail.send' }]);
    expect(seen).toEqual([{ input: { to: 'ops@example.com' }, output: null, compensates: mail!.id }]);
  });

  it('a plain cancel compensates nothing; a compensation is refused for a read-only tool at definition', async () => {
    const { runtime, runId, journal } = await waitingShop(dialect);
    const run = await runtime.cancel(runId);
    expect(run).toMatchObject({ status: 'failed', compensation: null });
    expect(readShop(journal).filter((l) => l.kind === 'refund')).toHaveLength(0);
    expect(() =>
      defineTool({
        name: 'peek',
        description: 'x',
        input: z.object({}),
        effect: 'read',
        risk: 'low',
        execute: () => 1,
        compensate: () => 0,
      }),
    ).toThrow(/nothing for compensate/);
    expect(() =>
      defineTool({
        name: 'pay',
        description: 'x',
        input: z.object({}),
        effect: 'idempotent',
        risk: 'low',
        execute: () => 1,
        compensate: () => 0,
        compensateEffect: 'reconcilable',
      }),
    ).toThrow(/reconcileCompensation/);
  });
});
