/**
 * A parent and its child driven by different runtimes on one database: an office runtime starts
 * the parent (and its clerk child) and goes away while both wait; a person approves the clerk's
 * archive through an API-only runtime, on the parent's id; a worker of the clerk agent alone
 * (which cannot drive the parent) wakes the child and ends it, which marks the parent due; an
 * office worker opened afterwards wakes the parent, which takes the child's answer. The effect
 * happens once and the answer reaches the parent once. On PostgreSQL and on a SQLite file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Run, Runtime } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { scaled } from '../helpers/limits.js';
import { openRuntime } from '../helpers/runtime.js';
import { clerkAgent, treeOptions } from '../helpers/tree-agents.js';

/** Resolves once the run has ended. */
async function ended(runtime: Runtime, runId: string): Promise<Run> {
  const deadline = Date.now() + scaled(30_000);
  for (;;) {
    const run = await runtime.get(runId);
    if (run.status === 'succeeded' || run.status === 'failed') return run;
    if (Date.now() > deadline) throw new Error(`Run '${runId}' is still ${run.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(ALL_DIALECTS)('a parent and its child in different runtimes (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('ends the child in a runtime of its agent alone, and the parent where it can be driven, once each', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const lease = { leaseMs: scaled(2_000), claimEveryMs: 100 };
    // The office starts the parent (and its clerk child), then goes away while both wait.
    const office = openRuntime({ ...treeOptions(database, effects), ...lease });
    const parent = await office.start({ input: 'tidy up' });
    const waiting = await office.wait(parent.id);
    const child = `${parent.id}.s0.c0.child`;
    expect(waiting.childWait).toMatchObject({ runId: child, asking: { runId: child, waitReason: 'approval' } });
    await office.close();

    // A person approves the clerk's archive on the parent's id, through an API-only runtime.
    const api = openRuntime({ ...treeOptions(database, effects), ...lease, drive: false });
    await api.approve(parent.id, waiting.childWait!.asking!.pendingApprovalId, { by: 'alice' });

    // A worker of the clerk alone ends the child; it cannot drive the parent, which stays due.
    const clerk = clerkAgent(effects);
    const clerkWorker = openRuntime({
      database,
      agent: 'clerk',
      planner: clerk.planner!,
      tools: clerk.tools,
      ...lease,
    });
    expect(await ended(api, child)).toMatchObject({ status: 'succeeded' });
    expect(await api.get(parent.id)).toMatchObject({ status: 'waiting_human', waitReason: 'child' });
    expect(clerkWorker.recoveryFailures.size).toBe(0);

    // An office worker opens: the parent, due since its child ended, takes the child's answer.
    openRuntime({ ...treeOptions(database, effects), ...lease });
    const done = await ended(api, parent.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'parent: clerk: {"archived":"a.json"}' });
    expect(readFileSync(effects, 'utf8').trim().split('\n')).toEqual([`a.json ${child}.s0.c0`]);
    const told = [];
    for await (const event of api.events(parent.id, { follow: false })) {
      if (event.type === 'child') told.push(event.data.status);
    }
    expect(told).toEqual(['started', 'succeeded']);
  });
});
