/** Approvals: a step waits for a human, a decision is single use, a rejection is told to the model; on both dialects. */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, rowsOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { createWorld, readEffects } from '../helpers/world.js';

function highRiskSetup(database: string, effects: string): RuntimeOptions {
  return {
    database,
    planner: createScriptedPlanner((request) => {
      if (request.stepIndex === 0) {
        return {
          type: 'tool_calls',
          calls: [
            { tool: 'world.read', args: { value: 'look' } },
            { tool: 'world.unsafe', args: { value: 'send' } },
          ],
        };
      }
      return { type: 'final', answer: `final: ${request.messages.at(-1)!.content}` };
    }),
    tools: [createWorld(effects).read, createWorld(effects, { risk: 'high' }).unsafe],
  };
}

describe.each(ALL_DIALECTS)('approvals on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('waits for a human before any call of the step runs, and survives a clean close', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const options = highRiskSetup(database, effects);
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('waiting_human');
    expect(run.waitReason).toBe('approval');
    expect(readEffects(effects)).toEqual([]);
    const [approval] = await runtime.approvals(run.id);
    expect(approval).toMatchObject({ id: run.pendingApprovalId, status: 'pending', kind: 'tool' });
    expect(approval!.toolCallIds).toEqual([`${run.id}.s0.c1`]);

    runtime = await restart(runtime, options);
    expect((await runtime.wait(run.id)).status).toBe('waiting_human');
    const decided = await runtime.approve(run.id, approval!.id, { by: 'alice', reason: 'looks fine' });
    expect(decided).toMatchObject({ status: 'approved', decidedBy: 'alice', reason: 'looks fine' });
    const done = await runtime.wait(run.id);
    expect(done.id).toBe(run.id);
    expect(done.status).toBe('succeeded');
    expect(readEffects(effects).map((e) => e.tool)).toEqual(['world.read', 'world.unsafe']);
    const events = await eventsOf(runtime, run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.some((e) => e.type === 'approval_result' && e.data.by === 'alice')).toBe(true);
  });

  it('executes once when approved twice, and answers the second with approval.already_decided', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(highRiskSetup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    await expect(runtime.approve(run.id, run.pendingApprovalId!, { by: 'bob' })).rejects.toMatchObject({
      code: 'approval.already_decided',
    });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    await expect(runtime.reject(run.id, run.pendingApprovalId!, { by: 'bob' })).rejects.toMatchObject({
      code: 'approval.already_decided',
    });
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(1);
  });

  it('executes once when five approvals race, and the other four get approval.already_decided', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(highRiskSetup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd', 'e'].map((by) => runtime.approve(run.id, run.pendingApprovalId!, { by })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason.code);
    expect(errors).toEqual([
      'approval.already_decided',
      'approval.already_decided',
      'approval.already_decided',
      'approval.already_decided',
    ]);
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(1);
    expect(await runtime.approvals(run.id)).toHaveLength(1);
  });

  it('answers approval.already_decided to the decisions that lose a race to one that ends the run', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(highRiskSetup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    // A rejection that terminates ends the run in the unit that decides: the others, queued
    // behind it on the same run, find it ended, and are told the wait was decided.
    const results = await Promise.allSettled(
      ['a', 'b', 'c'].map((by) => runtime.reject(run.id, run.pendingApprovalId!, { by, terminate: true })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason.code);
    expect(errors).toEqual(['approval.already_decided', 'approval.already_decided']);
    expect((await runtime.wait(run.id)).status).toBe('failed');
    expect(readEffects(effects)).toEqual([]);
  });

  it('tells the model about a rejection and runs none of the step', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(highRiskSetup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    await runtime.reject(run.id, run.pendingApprovalId!, { by: 'carol', reason: 'too risky' });
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toContain('carol rejected tool');
    expect(done.answer).toContain('too risky');
    expect(readEffects(effects)).toEqual([]);
    const rows = await rowsOf(runtime, database, dialect);
    expect((await rows.listToolCalls(run.id)).map((c) => c.status)).toEqual(['skipped', 'rejected']);
  });

  it('ends the run rejected when the reviewer stops it', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(highRiskSetup(database, effects));
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    await runtime.reject(run.id, run.pendingApprovalId!, { by: 'carol', terminate: true });
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'failed', stopReason: 'rejected' });
    expect(readEffects(effects)).toEqual([]);
  });

  it('refuses decisions on unknown approvals and on other runs', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime(highRiskSetup(database, effects));
    const a = await runtime.wait((await runtime.start({ input: 'x' })).id);
    const b = await runtime.wait((await runtime.start({ input: 'y' })).id);
    await expect(runtime.approve(a.id, 'nope', { by: 'x' })).rejects.toMatchObject({ code: 'approval.not_found' });
    await expect(runtime.approve(a.id, b.pendingApprovalId!, { by: 'x' })).rejects.toMatchObject({
      code: 'approval.not_found',
    });
    await expect(runtime.approve('run_nope', 'nope', { by: 'x' })).rejects.toMatchObject({ code: 'run.not_found' });
    expect((await runtime.get(a.id)).status).toBe('waiting_human');
    expect(readEffects(effects)).toEqual([]);
  });
});
