/**
 * SIGKILL during compensation: Baton is killed inside an idempotent compensator (after its
 * refund, before it answers) and, in the next process, inside a reconcilable one (after its
 * restore). Each compensation runs at most once per its effect class: the idempotent one again
 * with the same key (its effect once), the reconcilable one not again (its reconcile says it
 * happened); the run ends cancelled with everything undone, once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { waitUntil } from '../helpers/wait-until.js';
import { REPO_ROOT } from '../helpers/run-node.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { createShop, readShop, SHOP_SCRIPT } from '../helpers/shop.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempDir } from '../helpers/temp.js';

const CHILD = join(REPO_ROOT, 'test/helpers/compensation-child.ts');

describe('SIGKILL during compensation', () => {
  it('resumes each compensation by its effect class: the idempotent one rerun with its key, the reconcilable one reconciled', async () => {
    const dir = tempDir();
    const db = join(dir, 'baton.db');
    const journal = join(dir, 'shop.jsonl');
    const phase = (name: string) =>
      spawnUntilJsonLine<{ run_id: string }>(CHILD, [JSON.stringify({ db, journal, phase: name })]);
    const undoCalls = (tool: string) => readShop(journal).filter((l) => l.kind === 'undo_call' && l.tool === tool);

    // 1: the newest charge's refund happens, then the process dies before it answers.
    const start = await phase('start');
    await waitUntil(() => readShop(journal).some((l) => l.kind === 'refund'), 'the first refund');
    expect(await start.kill()).toBe('SIGKILL');
    // 2: resumed; the refund runs again with the same key (idempotent); the restore happens, then death again.
    const resume = await phase('resume');
    expect(resume.first.run_id).toBe(start.first.run_id);
    await waitUntil(() => readShop(journal).some((l) => l.kind === 'restore'), 'the restore');
    expect(await resume.kill()).toBe('SIGKILL');
    // 3: resumed; the restore is reconciled (not run again); the last charge is refunded; the run ends.
    const finish = await phase('finish');
    await waitUntil(() => finish.lines().some((l) => l.status === 'failed'), 'the run to end');
    await finish.kill();

    const lines = readShop(journal);
    // Every effect undone exactly once, newest first.
    expect(lines.filter((l) => l.kind === 'refund' || l.kind === 'restore').map((l) => `${l.kind} ${l.order}`)).toEqual(
      ['refund B', 'restore A', 'refund A'],
    );
    // The idempotent refund of B was called twice with one key; the reconcilable restore once.
    const refundsOfB = undoCalls('shop.charge').filter((l) => l.order === 'B');
    expect(refundsOfB.map((l) => l.attempt)).toEqual([1, 2]);
    expect(new Set(refundsOfB.map((l) => l.key)).size).toBe(1);
    expect(new Set(refundsOfB.map((l) => l.pid)).size).toBe(2);
    expect(undoCalls('shop.archive')).toHaveLength(1);

    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(SHOP_SCRIPT),
      tools: createShop(journal),
    });
    const run = await runtime.get(start.first.run_id);
    expect(run).toMatchObject({
      status: 'failed',
      stopReason: 'cancelled',
      compensation: { status: 'done', failed: [] },
    });
    expect(run.compensation!.compensated.map((c) => c.tool)).toEqual(['shop.charge', 'shop.archive', 'shop.charge']);
    const events = await eventsOf(runtime, run.id);
    const restore = events.filter((e) => e.type === 'compensation' && e.data.tool === 'shop.archive');
    expect(restore.map((e) => [e.data.status, e.data.recovery ?? null])).toEqual([
      ['started', null],
      ['succeeded', 'reconciled'],
    ]);
    const refundB = events.filter(
      (e) => e.type === 'compensation' && e.data.tool === 'shop.charge' && e.data.status === 'started',
    );
    expect(refundB[1]!.data).toMatchObject({ attempt: 2, recovery: 'rerun' });
    // The log stayed whole across both kills.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });
});
