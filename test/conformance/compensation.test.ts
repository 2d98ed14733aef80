/**
 * Compensation on a SQLite file and on PostgreSQL: the same run undone the same way (newest
 * first, each compensation's ledger row beside the call it undoes, the report on the run's own
 * row), and a run that restarts mid-compensation finishes it on either store.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { createShop, readShop, SHOP_SCRIPT } from '../helpers/shop.js';
import { waitUntil } from '../helpers/wait-until.js';
import { scaled } from '../helpers/limits.js';

/**
 * The lease of the two runtimes in the cancel-from-elsewhere test. `cancel()` asked of a run another
 * runtime drives waits two leases for it to end, compensation included; at 900 ms four undos on a
 * loaded machine sometimes took longer and the cancel answered `executing`. Scaled like the other
 * limits: an upper bound, not a wait.
 */
const LEASE_MS = scaled(3_000);

describe.each(ALL_DIALECTS)('compensation on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('undoes a cancelled run newest first, and finishes a compensation interrupted by a restart', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = { database, planner: createScriptedPlanner(SHOP_SCRIPT), tools: createShop(effects) };
    let runtime = openRuntime({ ...options, tools: createShop(effects, { hangAfterUndo: 'shop.archive' }) });
    const run = await runtime.start({ input: 'handle orders A and B' });
    expect((await runtime.wait(run.id)).status).toBe('waiting_human');
    await runtime.cancel(run.id, { compensate: true });
    // The archive's restore happens and hangs: the runtime closes under it, a new one resumes.
    await waitUntil(() => readShop(effects).some((l) => l.kind === 'restore'), 'the restore');
    expect((await runtime.get(run.id)).compensation).toMatchObject({ status: 'compensating' });
    runtime = await restart(runtime, options);
    const ended = await runtime.wait(run.id);
    expect(ended).toMatchObject({
      status: 'failed',
      stopReason: 'cancelled',
      compensation: { status: 'done', failed: [] },
    });
    expect(ended.compensation!.compensated.map((c) => c.tool)).toEqual(['shop.charge', 'shop.archive', 'shop.charge']);
    expect(ended.compensation!.notCompensated.map((c) => c.tool)).toEqual(['shop.notify']);
    const undone = readShop(effects).filter((l) => l.kind === 'refund' || l.kind === 'restore');
    expect(undone.map((l) => `${l.kind} ${l.order}`)).toEqual(['refund B', 'restore A', 'refund A']);
    const ledger = await runtime.toolCalls(run.id);
    const rows = ledger.filter((c) => c.compensates !== null);
    expect(rows.map((c) => [c.callIndex, c.status])).toEqual(
      expect.arrayContaining([
        [-1, 'succeeded'],
        [-1, 'skipped'],
      ]),
    );
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(ledger.find((c) => c.id === row.compensates)?.stepIndex).toBe(row.stepIndex);
    const events = await eventsOf(runtime, run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const archive = events.filter((e) => e.type === 'compensation' && e.data.tool === 'shop.archive');
    expect(archive.map((e) => e.data.status)).toEqual(['started', 'succeeded']);
    expect(archive[1]!.data.recovery).toBe('reconciled');
  });

  it('a compensating cancel asked of a run another runtime drives is carried out there, undoing the run', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = { database, planner: createScriptedPlanner(SHOP_SCRIPT), tools: createShop(effects) };
    const a = openRuntime({
      ...options,
      leaseMs: LEASE_MS,
      // The planner of the last step (the deletion) waits until the run leaves planning.
      hooks: {
        beforeActor: ({ actor, stepIndex, signal }) =>
          actor === 'planner' && stepIndex === 4
            ? new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('left'))))
            : undefined,
      },
    });
    const b = openRuntime({ ...options, recover: false, leaseMs: LEASE_MS });
    const run = await a.start({ input: 'handle orders A and B' });
    await expect.poll(async () => (await b.get(run.id)).usage.steps, { timeout: scaled(30_000) }).toBe(4);
    await expect.poll(async () => (await b.get(run.id)).status).toBe('planning');
    const answered = await b.cancel(run.id, { reason: 'from b', compensate: true });
    expect(answered.status).toBe('failed');
    const ended = await b.get(run.id);
    expect(ended).toMatchObject({ stopReason: 'cancelled', compensation: { reason: 'cancelled', status: 'done' } });
    expect(ended.compensation!.compensated.map((c) => c.tool)).toEqual(['shop.charge', 'shop.archive', 'shop.charge']);
    expect(b.stats().liveRuns).toBe(0);
    expect(readShop(effects).filter((l) => l.kind === 'refund')).toHaveLength(2);
  });
});
