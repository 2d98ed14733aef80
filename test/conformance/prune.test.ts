/**
 * Retention on a SQLite file and on PostgreSQL: `prune()` deletes finished runs that finished
 * before an instant with everything only they hold (events, steps, ledger, approvals, history,
 * artifacts no remaining run stored, empty sessions), never a run that is active or waiting or
 * becomes active during the prune, keeps a shared artifact while one of its runs remains, and
 * with `dryRun` counts exactly that and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { createSqliteStore, type Store } from '../../src/store/index.js';
import { createPostgresStore } from '../../src/store/postgres/pg-store.js';
import { ALL_DIALECTS, freshDatabaseOf, type DialectName, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { blobTool } from '../helpers/blob-tool.js';
import { createWorld } from '../helpers/world.js';

/** `art:N` stores artifact N (runs with the same N share it), `wait` waits for approval, anything else answers. */
function setup(database: string, effects: string): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) => {
      const input = String(request.input);
      if (request.stepIndex > 0) return { type: 'final', answer: `done: ${input}` };
      if (input.startsWith('art:')) {
        return { type: 'tool_calls', calls: [{ tool: 'blob.read', args: { n: Number(input.slice(4)) } }] };
      }
      if (input === 'wait') return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'x' } }] };
      return { type: 'final', answer: `done: ${input}` };
    }),
    tools: [blobTool(), createWorld(effects, { risk: 'high' }).unsafe],
  };
}

/** A second handle on the database, to look at rows the runtime no longer answers for. */
async function storeOn(dialect: DialectName, database: string): Promise<Store> {
  return dialect === 'sqlite' ? createSqliteStore(database) : createPostgresStore(database);
}

/** Resolves once the clock has passed every update of the runs so far: the instant to prune before. */
async function instantAfter(runtime: Runtime, ids: string[]): Promise<number> {
  let latest = 0;
  for (const id of ids) latest = Math.max(latest, (await runtime.get(id)).updatedAt);
  while (Date.now() <= latest) await new Promise((resolve) => setImmediate(resolve));
  return Date.now();
}

async function finished(runtime: Runtime, input: string, sessionId?: string): Promise<string> {
  const run = await runtime.start({ input, ...(sessionId ? { sessionId } : {}) });
  const done = await runtime.wait(run.id);
  expect(done.status).toBe('succeeded');
  return run.id;
}

/** What the database still holds of a run. */
async function rowsOf(store: Store, runId: string) {
  return {
    run: (await store.getRun(runId)) !== undefined,
    events: (await store.listEvents(runId)).length,
    steps: (await store.listSteps(runId)).length,
    toolCalls: (await store.listToolCalls(runId)).length,
    approvals: (await store.listApprovals(runId)).length,
  };
}

describe.each(ALL_DIALECTS)('prune on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('deletes old finished runs with what only they hold, keeps shared artifacts and active runs, and a dry run changes nothing', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    await runtime.ready;
    const old1 = await finished(runtime, 'art:1');
    const old2 = await finished(runtime, 'art:2');
    const waiting = await runtime.wait((await runtime.start({ input: 'wait' })).id);
    expect(waiting.status).toBe('waiting_human');
    // A finished run in a session whose later run is waiting: kept while that run is active.
    const inUse = await finished(runtime, 'plain', 'busy');
    const busy = await runtime.wait((await runtime.start({ input: 'wait', sessionId: 'busy' })).id);
    const cutoff = await instantAfter(runtime, [old1, old2, waiting.id, inUse, busy.id]);
    const recent = await finished(runtime, 'art:2');
    const [shared] = await runtime.artifacts(old2);
    const [only] = await runtime.artifacts(old1);
    const store = await storeOn(dialect, database);
    try {
      const before = { old1: await rowsOf(store, old1), old2: await rowsOf(store, old2) };
      expect(before.old1).toMatchObject({ run: true, steps: 2, toolCalls: 1 });

      const dry = await runtime.prune({ finishedBefore: cutoff, dryRun: true });
      expect(await rowsOf(store, old1)).toEqual(before.old1);
      expect(await store.getArtifact(only!.sha256)).toBeDefined();
      const report = await runtime.prune({ finishedBefore: cutoff, batchSize: 1 });
      const counted = (r: typeof report) => ({
        ...r,
        batches: 0,
        longestBatchMs: 0,
        durationMs: 0,
        reclaimedBytes: 0,
        dryRun: false,
      });
      expect(counted(dry)).toEqual(counted(report));
      expect(report).toMatchObject({
        runs: 2,
        events: before.old1.events + before.old2.events,
        steps: 4,
        toolCalls: 2,
        approvals: 0,
        messages: 4,
        sessions: 2,
        artifacts: 1,
        artifactBytes: only!.size,
        batches: 2,
      });
      for (const id of [old1, old2]) {
        expect(await rowsOf(store, id)).toEqual({ run: false, events: 0, steps: 0, toolCalls: 0, approvals: 0 });
        await expect(runtime.get(id)).rejects.toMatchObject({ code: 'run.not_found' });
      }
      expect(await store.getArtifact(only!.sha256)).toBeUndefined();
      // The recent run stored the same bytes: they stay, and it still answers for them.
      expect((await runtime.artifact(recent, shared!.sha256)).content.toString()).toContain('row 2999 of blob 2');
      expect((await rowsOf(store, inUse)).run).toBe(true);
      expect(await store.listMessages((await store.getRun(inUse))!.session_id)).toHaveLength(2);

      // The waiting runs were never touched: decided now, they finish, their logs whole.
      for (const run of [waiting, busy]) {
        await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
        expect((await runtime.wait(run.id)).status).toBe('succeeded');
        const events = await eventsOf(runtime, run.id);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      }
      // Once the session's run is over, its older run goes too; nothing else changed, so a second prune finds nothing.
      expect(await runtime.prune({ finishedBefore: cutoff })).toMatchObject({ runs: 1, sessions: 0 });
      expect(await runtime.prune({ finishedBefore: cutoff })).toMatchObject({ runs: 0, batches: 0 });
    } finally {
      await store.close();
    }
  });

  it('keeps the newest runs with keepLast and prunes one status only with status', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const ok: string[] = [];
    for (let i = 0; i < 5; i++) ok.push(await finished(runtime, `plain ${i}`));
    const failed: string[] = [];
    for (let i = 0; i < 2; i++) {
      const run = await runtime.wait((await runtime.start({ input: 'wait' })).id);
      failed.push((await runtime.cancel(run.id, { reason: 'not needed' })).id);
    }
    const cutoff = await instantAfter(runtime, [...ok, ...failed]);
    expect(await runtime.prune({ finishedBefore: cutoff, status: 'failed' })).toMatchObject({ runs: 2, approvals: 2 });
    for (const id of failed) await expect(runtime.get(id)).rejects.toMatchObject({ code: 'run.not_found' });
    expect(await runtime.prune({ finishedBefore: cutoff, keepLast: 2, dryRun: true })).toMatchObject({ runs: 3 });
    expect(await runtime.prune({ finishedBefore: cutoff, keepLast: 2 })).toMatchObject({ runs: 3 });
    const left = (await runtime.list()).runs.map((run) => run.id);
    expect(left).toEqual([ok[4], ok[3]]);
    await expect(runtime.prune({ finishedBefore: cutoff, status: 'waiting_human' as 'failed' })).rejects.toMatchObject({
      code: 'input.invalid',
    });
    await expect(runtime.prune({ finishedBefore: Number.NaN })).rejects.toMatchObject({ code: 'input.invalid' });
  });

  it('never deletes a run that is active, waiting, or becomes active while it prunes', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(setup(database, effects));
    const old: string[] = [];
    for (let i = 0; i < 60; i++) old.push(await finished(runtime, `plain ${i}`, `s${i}`));
    const waiting = [];
    for (let i = 0; i < 6; i++)
      waiting.push(await runtime.wait((await runtime.start({ input: 'wait', sessionId: `w${i}` })).id));
    const cutoff = await instantAfter(runtime, [...old, ...waiting.map((w) => w.id)]);
    const order: string[] = [];
    const pruning = runtime.prune({ finishedBefore: cutoff, batchSize: 4 }).then((report) => {
      order.push('pruned');
      return report;
    });
    // While it prunes: runs start in sessions whose old runs are still to come, and waiting runs are decided.
    const started = await Promise.all(
      [50, 52, 54, 56, 58].map(async (i) => {
        const run = await runtime.start({ input: 'wait', sessionId: `s${i}` });
        order.push('started');
        return run;
      }),
    );
    const decided = await Promise.all(
      waiting.slice(0, 3).map((run) => runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' })),
    );
    const report = await pruning;
    expect(order.indexOf('started')).toBeLessThan(order.indexOf('pruned'));
    expect(report.batches).toBeGreaterThan(3);
    expect(decided).toHaveLength(3);
    // Every run that was not finished when the prune began is whole.
    for (const run of [...started, ...waiting]) {
      const now = await runtime.wait(run.id);
      expect(['waiting_human', 'succeeded']).toContain(now.status);
      const events = await eventsOf(runtime, run.id);
      expect(events[0]).toMatchObject({ seq: 1, type: 'run.created' });
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    }
    // Only old finished runs went: at least all of those whose sessions nothing started in.
    const gone: string[] = [];
    for (const id of old) if (!(await runtime.get(id).catch(() => null))) gone.push(id);
    expect(report.runs).toBe(gone.length);
    expect(gone.length).toBeGreaterThanOrEqual(55);
  });
});
