/**
 * One bad row fails alone: a run whose stored JSON is corrupt, whose snapshot has the wrong
 * shape, or whose status is unknown is quarantined (reported in `recoveryFailures` — by the
 * background check of waiting rows that follows the open, or when the run is first needed —, readable with
 * a `store.corrupt_row` failure naming the run and column, cancellable by an operator) and never
 * blocks the other runs. Rows are edited directly, as a bad disk or a bad hand would.
 */
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BatonError, createScriptedPlanner, type Runtime } from '../../src/index.js';
import { createServerAgent } from '../helpers/server-agent.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { storeOf } from '../../src/runtime/internals.js';

async function twoWaitingRuns() {
  const files = tempFiles();
  const agent = createServerAgent(files.effects);
  const options = { database: files.db, planner: agent.planner, tools: agent.tools };
  const first = openRuntime(options);
  const bad = await first.start({ input: 'mail' });
  const good = await first.start({ input: 'mail' });
  await first.wait(bad.id);
  await first.wait(good.id);
  await first.close();
  return { files, options, bad: bad.id, good: good.id };
}

function edit(db: string, sql: string, ...params: unknown[]) {
  const sqlite = new SQLite(db);
  sqlite.prepare(sql).run(...params);
  sqlite.close();
}

async function thrown(promise: Promise<unknown> | (() => unknown)): Promise<BatonError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    expect(error).toBeInstanceOf(BatonError);
    return error as BatonError;
  }
  throw new Error('did not throw');
}

async function expectOthersUnharmed(runtime: Runtime, good: string) {
  const waiting = await runtime.get(good);
  expect(waiting.status).toBe('waiting_human');
  await runtime.approve(good, waiting.pendingApprovalId!, { by: 'ops' });
  expect(await runtime.wait(good)).toMatchObject({ status: 'succeeded' });
}

describe('corrupt rows', () => {
  it('quarantines a run whose context is not JSON; the listing and the other runs go on', async () => {
    const { files, options, bad, good } = await twoWaitingRuns();
    edit(files.db, 'update runs set context = ? where id = ?', '{"user_id": ', bad);
    const runtime = openRuntime(options);
    await expect
      .poll(() => runtime.recoveryFailures.get(bad))
      .toMatchObject({
        code: 'store.corrupt_row',
        details: { run_id: bad, column: 'context' },
      });
    const listed = (await runtime.list()).runs;
    expect(listed.map((r) => r.id).sort()).toEqual([bad, good].sort());
    const corrupt = await runtime.get(bad);
    expect(corrupt.failure).toMatchObject({ code: 'store.corrupt_row', details: { column: 'context' } });
    expect(corrupt.failure?.message).toContain(bad);
    expect((await thrown(runtime.wait(bad))).failure.code).toBe('store.corrupt_row');
    expect((await thrown(runtime.approve(bad, `${bad}.s0.approval`, { by: 'ops' }))).failure.code).toBe(
      'store.corrupt_row',
    );
    await expectOthersUnharmed(runtime, good);
    // An operator ends it: failed, with the corruption on record.
    const cancelled = await runtime.cancel(bad, { reason: 'bad row' });
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(cancelled.failure).toMatchObject({ code: 'store.corrupt_row' });
    expect((await storeOf(runtime).listEvents(bad, 0, 1000)).at(-1)).toMatchObject({ type: 'state' });
  });

  it('quarantines a run whose snapshot is not JSON', async () => {
    const { files, options, bad, good } = await twoWaitingRuns();
    edit(files.db, 'update runs set snapshot = ? where id = ?', '{"value": "waiting_human", ', bad);
    const runtime = openRuntime(options);
    await expect
      .poll(() => runtime.recoveryFailures.get(bad))
      .toMatchObject({
        code: 'store.corrupt_row',
        details: { column: 'snapshot' },
      });
    expect((await thrown(runtime.wait(bad))).failure.code).toBe('store.corrupt_row');
    expect((await thrown(runtime.approve(bad, `${bad}.s0.approval`, { by: 'ops' }))).failure.message).toContain(
      'snapshot',
    );
    await expectOthersUnharmed(runtime, good);
    expect(await runtime.cancel(bad)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
  });

  it('quarantines a run whose snapshot is JSON of the wrong shape', async () => {
    const { files, options, bad, good } = await twoWaitingRuns();
    edit(files.db, 'update runs set snapshot = ? where id = ?', JSON.stringify({ hello: 'world' }), bad);
    const runtime = openRuntime(options);
    await expect
      .poll(() => runtime.recoveryFailures.get(bad))
      .toMatchObject({
        code: 'store.corrupt_row',
        details: { column: 'snapshot' },
      });
    await expectOthersUnharmed(runtime, good);
    expect(await runtime.cancel(bad)).toMatchObject({ status: 'failed' });
  });

  it('reports a run with an unknown status instead of skipping it', async () => {
    const { files, options, bad, good } = await twoWaitingRuns();
    edit(files.db, 'update runs set status = ? where id = ?', 'sleeping', bad);
    const runtime = openRuntime(options);
    await runtime.ready;
    expect(runtime.recoveryFailures.get(bad)).toMatchObject({
      code: 'store.corrupt_row',
      details: { column: 'status' },
    });
    expect((await runtime.get(bad)).failure).toMatchObject({ code: 'store.corrupt_row' });
    await expectOthersUnharmed(runtime, good);
    expect(await runtime.cancel(bad)).toMatchObject({ status: 'failed' });
  });

  it('answers a corrupt finished run with its failure instead of throwing', async () => {
    const files = tempFiles();
    const runtime = openRuntime({
      database: files.db,
      planner: createScriptedPlanner([{ type: 'final', answer: 'ok' }]),
      tools: [],
    });
    const run = await runtime.start({ input: 'x' });
    await runtime.wait(run.id);
    edit(files.db, 'update runs set failure = ? where id = ?', 'nope{', run.id);
    expect((await runtime.get(run.id)).failure).toMatchObject({
      code: 'store.corrupt_row',
      details: { column: 'failure' },
    });
    expect((await runtime.list()).runs).toHaveLength(1);
  });
});
