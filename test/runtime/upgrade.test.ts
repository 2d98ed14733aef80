import { describe, expect, it } from 'vitest';
import { MACHINE_VERSION } from '../../machines/index.js';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { openRuntime, restart } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';

/** Rewrites a stored version-2 snapshot the way machine version 1 saved it. */
function toVersion1(json: string): string {
  const snapshot = JSON.parse(json) as {
    context: { costUsd?: number; limits: { maxCostUsd?: unknown } };
    children: Record<string, { snapshot: { input?: { costUsd?: number; limits?: { maxCostUsd?: unknown } } } }>;
  };
  delete snapshot.context.costUsd;
  delete snapshot.context.limits.maxCostUsd;
  for (const child of Object.values(snapshot.children)) {
    delete child.snapshot.input?.costUsd;
    delete child.snapshot.input?.limits?.maxCostUsd;
  }
  return JSON.stringify(snapshot);
}

describe('machine versions', () => {
  it('resumes a run saved by machine version 1 and saves it as the current version', async () => {
    expect(MACHINE_VERSION).toBe(2);
    const { db, effects } = tempFiles();
    const options: RuntimeOptions = {
      database: db,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'v' } }] },
        { type: 'final', answer: 'sent' },
      ]),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
    };
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget: { maxCostUsd: 5 } } })).id);
    expect(run.status).toBe('waiting_human');
    const row = (await storeOf(runtime).getRun(run.id))!;
    storeOf(runtime)
      .db.sqlite.prepare('update runs set snapshot = ?, machine_version = 1 where id = ?')
      .run(toVersion1(row.snapshot), run.id);
    runtime = await restart(runtime, options);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'sent', usage: { costUsd: 0 } });
    expect(readEffects(effects)).toHaveLength(1);
    expect((await storeOf(runtime).getRun(run.id))!.machine_version).toBe(MACHINE_VERSION);
  });

  it('leaves a run saved by a newer machine as it is, and resumes the others', async () => {
    const { db, effects } = tempFiles();
    const options: RuntimeOptions = {
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'v' } }] }]),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
    };
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    storeOf(runtime).db.sqlite.prepare('update runs set machine_version = 99 where id = ?').run(run.id);
    const other = await runtime.start({ input: 'y' });
    runtime = await restart(runtime, options);
    await expect.poll(() => runtime.recoveryFailures.get(run.id)?.message).toMatch(/newer than this machine/);
    expect(await storeOf(runtime).getRun(run.id)).toMatchObject({ status: 'waiting_human', machine_version: 99 });
    // The other runs of the file are resumed all the same.
    expect((await runtime.wait(other.id)).status).toBe('waiting_human');
    expect(runtime.recoveryFailures.has(other.id)).toBe(false);
  });
});
