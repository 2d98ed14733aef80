import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { toWriteError } from '../../src/store/index.js';
import { canMountTmpfs, smallDisk } from '../helpers/full-disk.js';
import { openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { tempFiles } from '../helpers/temp.js';
import { storeOf } from '../../src/runtime/internals.js';

/** A run that asks for approval of one high-risk call, then answers. */
function approvalSetup(db: string, effects: string): RuntimeOptions {
  return {
    database: db,
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'archive' } }] }
        : { type: 'final', answer: 'done' },
    ),
    tools: [createWorld(effects, { risk: 'high' }).unsafe],
  };
}

const writeFailed = { code: 'store.write_failed', failure: { details: { cause: 'SQLITE_FULL' }, retryable: true } };

describe.skipIf(!canMountTmpfs)('writes on a full disk', () => {
  async function waitingRun() {
    const disk = smallDisk();
    const { effects } = tempFiles();
    const runtime = openRuntime(approvalSetup(join(disk.dir, 'baton.db'), effects));
    const run = await runtime.wait((await runtime.start({ input: 'archive it' })).id);
    expect(run.status).toBe('waiting_human');
    return { disk, runtime, run, effects };
  }

  it('refuses a cancel it could not commit with store.write_failed, and the run stays as it was', async () => {
    const { disk, runtime, run, effects } = await waitingRun();
    disk.fill();
    await expect(runtime.cancel(run.id, { reason: 'no' })).rejects.toMatchObject(writeFailed);
    expect((await runtime.get(run.id)).status).toBe('waiting_human');
    disk.free();
    // Nothing was lost: the cancel, asked again, ends the run; the call never ran.
    const cancelled = await runtime.cancel(run.id, { reason: 'no' });
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(readEffects(effects)).toEqual([]);
  });

  it('refuses an approval and a rejection it could not commit, and the approval stays pending', async () => {
    const { disk, runtime, run, effects } = await waitingRun();
    disk.fill();
    await expect(runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' })).rejects.toMatchObject(writeFailed);
    await expect(runtime.reject(run.id, run.pendingApprovalId!, { by: 'alice' })).rejects.toMatchObject(writeFailed);
    const [approval] = await runtime.approvals(run.id);
    expect(approval).toMatchObject({ status: 'pending', decidedBy: null });
    expect(readEffects(effects)).toEqual([]);
    disk.free();
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('refuses a start and a prune it could not commit', async () => {
    const disk = smallDisk();
    const { effects } = tempFiles();
    const runtime = openRuntime(approvalSetup(join(disk.dir, 'baton.db'), effects));
    const first = await runtime.start({ input: 'x' });
    await runtime.cancel((await runtime.wait(first.id)).id);
    disk.fill();
    await expect(runtime.start({ input: 'y' })).rejects.toMatchObject(writeFailed);
    await expect(runtime.prune({ finishedBefore: Date.now() + 1_000 })).rejects.toMatchObject(writeFailed);
    expect((await runtime.list()).runs.map((r) => r.id)).toEqual([first.id]);
  });

  it('retries a run whose drive failed to commit, shows it in health, and resumes it once space is back', async () => {
    const disk = smallDisk();
    const { effects } = tempFiles();
    const runtime = openRuntime({
      database: join(disk.dir, 'baton.db'),
      planner: createScriptedPlanner([{ type: 'final', answer: 'hello' }]),
      tools: [createWorld(effects).read],
    });
    await runtime.ready;
    expect(runtime.health()).toMatchObject({ status: 'ok', stalledRuns: [] });
    const run = await runtime.start({ input: 'hi' });
    // Accepted and durable; its first transition is not committed yet.
    disk.fill();
    await waitUntil(
      () => runtime.health().stalledRuns.some((s) => s.runId === run.id && s.attempts >= 2),
      'the run to be retried and shown stalled',
    );
    const health = runtime.health();
    expect(health.status).toBe('degraded');
    expect(health.stalledRuns[0]).toMatchObject({
      runId: run.id,
      failure: { code: 'store.write_failed', details: { cause: 'SQLITE_FULL' } },
    });
    expect(health.stalledRuns[0]!.retryAt).toBeGreaterThan(0);
    expect((await runtime.get(run.id)).status).toBe('pending');
    disk.free();
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded', answer: 'hello' });
    await waitUntil(() => runtime.health().status === 'ok', 'the runtime to be healthy again');
    expect(runtime.health().stalledRuns).toEqual([]);
  });
});

describe('toWriteError', () => {
  it('names the database cause of a refused write on both dialects, and leaves other errors as they are', () => {
    const cases: [string, string | null][] = [
      ['SQLITE_FULL', 'SQLITE_FULL'],
      ['SQLITE_IOERR_WRITE', 'SQLITE_IOERR_WRITE'],
      ['SQLITE_BUSY', 'SQLITE_BUSY'],
      ['SQLITE_CONSTRAINT_UNIQUE', null],
      ['SQLITE_ERROR', null],
      ['53100', '53100'],
      ['58030', '58030'],
      ['08006', '08006'],
      ['57P01', '57P01'],
      ['25006', '25006'],
      ['23505', null],
      ['ECONNRESET', 'ECONNRESET'],
    ];
    for (const [code, cause] of cases) {
      const error = Object.assign(new Error(`failed with ${code}`), { code });
      const converted = toWriteError(error);
      if (cause === null) expect(converted).toBe(error);
      else expect(converted).toMatchObject({ code: 'store.write_failed', failure: { details: { cause } } });
    }
  });
});

describe('background errors', () => {
  it('are told to onError with what the runtime was doing, instead of being dropped', async () => {
    const seen: { code: string; activity: string }[] = [];
    const runtime = openRuntime({
      database: tempFiles().db,
      planner: createScriptedPlanner([]),
      tools: [],
      claimEveryMs: 20,
      onError: (failure, where) => seen.push({ code: failure.code, activity: where.activity }),
    });
    await runtime.ready;
    // The database goes away under the runtime: its claim rounds fail in the background.
    storeOf(runtime).db.sqlite.close();
    await waitUntil(() => seen.some((s) => s.activity === 'claiming runs'), 'a failed claim round to be told');
    expect(seen.find((s) => s.activity === 'claiming runs')).toMatchObject({ code: 'internal.error' });
  });
});

describe.skipIf(!canMountTmpfs)('a run stalled twice', () => {
  it('is picked up again each time: a stall that ended leaves nothing behind', async () => {
    const disk = smallDisk();
    const { effects } = tempFiles();
    const gates = new Map<number, () => void>();
    const runtime = openRuntime({
      database: join(disk.dir, 'baton.db'),
      planner: createScriptedPlanner((request) =>
        request.stepIndex < 2
          ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: `v${request.stepIndex}` } }] }
          : { type: 'final', answer: 'twice' },
      ),
      tools: [createWorld(effects).read],
      hooks: {
        // Steps 1 and 2 wait at the gate until the test has filled the disk.
        beforeActor: ({ actor, stepIndex }) =>
          actor === 'planner' && stepIndex > 0 && !gates.has(-stepIndex)
            ? new Promise<void>((resolve) => gates.set(stepIndex, resolve))
            : undefined,
      },
    });
    const run = await runtime.start({ input: 'go' });
    const episodes: number[] = [];
    for (const step of [1, 2]) {
      await waitUntil(() => gates.has(step), `the planner of step ${step} to wait`);
      disk.fill();
      gates.set(-step, () => undefined);
      gates.get(step)!();
      await waitUntil(
        () => runtime.health().stalledRuns.some((s) => s.attempts >= 4),
        `the run to stall (step ${step})`,
      );
      episodes.push(runtime.health().stalledRuns[0]!.since);
      disk.free();
      await waitUntil(() => runtime.health().stalledRuns.length === 0, `the stall of step ${step} to end`);
    }
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded', answer: 'twice' });
    expect(episodes[1]).toBeGreaterThan(episodes[0]!);
  });
});
