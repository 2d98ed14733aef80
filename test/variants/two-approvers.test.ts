/**
 * A machine variant end to end: the README's two-approver machine is covered by its own model,
 * every generated path runs through the real runtime (straight and restored before every
 * event), and the runtime applies its rules to real calls.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { extendRunMachine, type RunMachineDefinition } from '../../machines/index.js';
import { BatonError, createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { createRunModel, runPath, type PathOutcome, type RunPath } from '../../src/testing/index.js';
import { twoApprovers } from '../fixtures/two-approvers.js';
import { eventsOf, openRuntime, restart } from '../helpers/runtime.js';
import { tempDir, tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';
import { REPO_ROOT } from '../helpers/run-node.js';

const model = createRunModel(twoApprovers);

function nameOf(path: RunPath): string {
  const steps = path.steps.map(({ event }) => {
    if (event.type === 'need_approval') return `need_approval(${event.reason}, ${event.risk})`;
    if (event.type === 'approved') return `approved(${event.by})`;
    if (event.type === 'rejected' && event.terminate) return 'rejected(terminate)';
    return event.type;
  });
  return `${steps.join(' → ')} ⇒ ${JSON.stringify(path.steps.at(-1)!.after.value)}`;
}

function comparable(outcome: PathOutcome) {
  return {
    states: outcome.states,
    status: outcome.final.status,
    stopReason: outcome.final.stopReason,
    effects: outcome.effects.length,
    ledger: outcome.ledger,
  };
}

describe('the two-approver variant, modelled', () => {
  it('has every transition covered by generated paths, its own included', () => {
    console.log(
      `two-approvers: transitions covered ${model.covered.size}/${model.edges.length} by ${model.paths.length} paths`,
    );
    expect(model.uncovered).toEqual([]);
    expect(model.covered.size).toBe(model.edges.length);
    const ids = model.edges.map((e) => e.id);
    expect(ids).toContain('first_approval --approved[and(isPendingApproval, isDestructive)]--> second_approval');
    expect(ids).toContain('second_approval --approved[and(isPendingApproval, isNewApprover)]--> executing');
    // A path takes a destructive call through both approvers.
    const twoVotes = model.paths.find((p) => p.steps.filter((s) => s.event.type === 'approved').length === 2);
    expect(twoVotes && nameOf(twoVotes)).toMatch(/approved\(approver-a\) → approved\(approver-b\)/);
  });

  it('is covered as the README says', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    const claim = /variant above is covered (\d+)\/(\d+) by (\d+) paths/.exec(readme);
    expect(claim, 'README.md states the coverage of the two-approver variant').not.toBeNull();
    expect(claim!.slice(1).map(Number)).toEqual([model.covered.size, model.edges.length, model.paths.length]);
  });

  for (const path of model.paths) {
    it(`takes ${nameOf(path)}, straight and with a restore before every event`, async () => {
      const straight = await runPath(path, { database: join(tempDir(), 'straight.db'), machine: twoApprovers });
      const restored = await runPath(path, {
        database: join(tempDir(), 'restored.db'),
        machine: twoApprovers,
        restoreEveryStep: true,
      });
      expect(restored.restarts).toBeGreaterThanOrEqual(path.steps.length - 1);
      expect(comparable(restored)).toEqual(comparable(straight));
    });
  }
});

function destructiveSetup(db: string, effects: string): RuntimeOptions {
  const world = createWorld(effects, { risk: 'destructive' });
  const careful = createWorld(effects, { risk: 'high' });
  return {
    database: db,
    machine: twoApprovers,
    planner: createScriptedPlanner((request) => {
      if (request.stepIndex === 0)
        return { type: 'tool_calls', calls: [{ tool: 'world.idempotent', args: { value: 'drop' } }] };
      if (request.stepIndex === 1)
        return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'mail' } }] };
      return { type: 'final', answer: 'done' };
    }),
    tools: [world.idempotent, careful.unsafe],
    // Destructive calls are denied by default; this service lets people approve them.
    policy: ({ tool }) => (tool.risk === 'destructive' ? 'needs_approval' : undefined),
  };
}

describe('the two-approver variant in the runtime', () => {
  it('runs a destructive call only after two different people approved it, across a restart', async () => {
    const { db, effects } = tempFiles();
    const options = destructiveSetup(db, effects);
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'drop the table' })).id);
    expect(run.status).toBe('waiting_human');
    const approvalId = run.pendingApprovalId!;

    const first = await runtime.approve(run.id, approvalId, { by: 'alice', reason: 'looks right' });
    expect(first.status).toBe('pending');
    expect(first.votes).toEqual([{ by: 'alice', decision: 'approved', reason: 'looks right', at: expect.any(Number) }]);
    expect(await runtime.get(run.id)).toMatchObject({ status: 'waiting_human', pendingApprovalId: approvalId });
    expect(readEffects(effects)).toEqual([]);

    // The vote is in the snapshot and on the approval: a restart keeps it.
    runtime = await restart(runtime, options);
    const again = runtime.approve(run.id, approvalId, { by: 'alice' });
    await expect(again).rejects.toBeInstanceOf(BatonError);
    await expect(again).rejects.toMatchObject({
      failure: { code: 'approval.refused', details: { state: 'waiting_human.second_approval', by: 'alice' } },
    });
    expect((await runtime.approvals(run.id))[0]).toMatchObject({ status: 'pending', votes: [{ by: 'alice' }] });
    expect(readEffects(effects)).toEqual([]);

    const second = await runtime.approve(run.id, approvalId, { by: 'bob' });
    expect(second).toMatchObject({ status: 'approved', decidedBy: 'bob', votes: [{ by: 'alice' }] });
    const waiting = await runtime.wait(run.id);
    // Step 1's call is only `high`: one approver is enough there.
    expect(waiting.status).toBe('waiting_human');
    expect(readEffects(effects).map((e) => e.value)).toEqual(['drop']);
    const next = await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'carol' });
    expect(next).toMatchObject({ status: 'approved', votes: [] });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(readEffects(effects).map((e) => e.value)).toEqual(['drop', 'mail']);

    const results = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'approval_result');
    expect(results.map((e) => [e.data.by, e.data.final])).toEqual([
      ['alice', false],
      ['bob', true],
      ['carol', true],
    ]);
  });

  it('ends the run on a rejection after the first approval, with nothing run', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime(destructiveSetup(db, effects));
    const run = await runtime.wait((await runtime.start({ input: 'drop' })).id);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    await runtime.reject(run.id, run.pendingApprovalId!, { by: 'bob', terminate: true });
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'failed', stopReason: 'rejected' });
    expect((await runtime.toolCalls(run.id)).map((c) => c.status)).toEqual(['rejected']);
    expect(readEffects(effects)).toEqual([]);
  });

  it("never restores a run of the variant into Baton's machine, and the variant picks it up again", async () => {
    const { db, effects } = tempFiles();
    const options = destructiveSetup(db, effects);
    let runtime = openRuntime(options);
    const run = await runtime.wait((await runtime.start({ input: 'drop' })).id);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    const before = (await storeOf(runtime).getRun(run.id))!;
    expect(before).toMatchObject({ machine_name: 'two-approvers', machine_version: 1 });

    const stockOptions: RuntimeOptions = { ...options };
    delete stockOptions.machine;
    runtime = await restart(runtime, stockOptions);
    expect(runtime.machine.name).toBe('baton.run');
    await expect.poll(() => runtime.recoveryFailures.get(run.id)).toMatchObject({ code: 'run.machine_mismatch' });
    await expect(runtime.approve(run.id, run.pendingApprovalId!, { by: 'bob' })).rejects.toMatchObject({
      failure: { code: 'run.machine_mismatch' },
    });
    await expect(runtime.cancel(run.id)).rejects.toMatchObject({ failure: { code: 'run.machine_mismatch' } });
    // Only the lease the closed runtime released differs.
    expect(await storeOf(runtime).getRun(run.id)).toEqual({ ...before, owner: null, lease_until: null });
    // A run made by Baton's machine in the same file is unaffected.
    const plain = await runtime.start({ input: 'x', sessionId: 'other' });
    expect((await storeOf(runtime).getRun(plain.id))!.machine_name).toBe('baton.run');

    // A newer version of the variant without an upgrade refuses the old snapshot too.
    runtime = await restart(runtime, { ...options, machine: { ...twoApprovers, version: 2 } });
    await expect
      .poll(() => runtime.recoveryFailures.get(run.id)?.message)
      .toMatch(/version 1 of machine 'two-approvers'.*no upgrade/);
    // With an upgrade it is brought up, and saved under the new version.
    const upgraded = { ...twoApprovers, version: 2, upgrade: (snapshot: unknown) => snapshot };
    runtime = await restart(runtime, { ...options, machine: upgraded });
    expect(runtime.recoveryFailures.has(run.id)).toBe(false);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'bob' });
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'waiting_human' });
    expect((await storeOf(runtime).getRun(run.id))!.machine_version).toBe(2);
    expect(readEffects(effects).map((e) => e.value)).toEqual(['drop']);
  });

  it('says that a definition is expected when given an XState machine as it is', () => {
    const dir = tempDir();
    const database = join(dir, 'never.db');
    const base = destructiveSetup(database, join(dir, 'effects.jsonl'));
    const raw = twoApprovers.machine as unknown as RunMachineDefinition;
    let failure: BatonError['failure'] | undefined;
    try {
      openRuntime({ ...base, machine: raw });
    } catch (error) {
      failure = (error as BatonError).failure;
    }
    expect(failure).toMatchObject({ code: 'machine.incompatible' });
    expect(failure!.message).toBe(
      `The run machine cannot be driven: it is an XState machine ('${twoApprovers.machine.id}'), not a run machine ` +
        'definition: pass defineRunMachine({ name, version, machine }) (or extendRunMachine) with a lowercase name ' +
        'and a version stored with every snapshot',
    );
    expect(existsSync(database)).toBe(false);
  });

  it('refuses an incompatible machine before opening the file, naming what is missing', () => {
    const dir = tempDir();
    const database = join(dir, 'never.db');
    const base = destructiveSetup(database, join(dir, 'effects.jsonl'));
    const problemsOf = (machine: RunMachineDefinition): string[] => {
      try {
        openRuntime({ ...base, machine });
      } catch (error) {
        expect(error).toBeInstanceOf(BatonError);
        const failure = (error as BatonError).failure;
        expect(failure.code).toBe('machine.incompatible');
        expect(failure.message).toContain(machine.name);
        return failure.details!.problems as string[];
      }
      throw new Error(`the runtime opened with machine '${machine.name}'`);
    };
    const toy = createMachine({ id: 'toy', initial: 'pending', states: { pending: {}, done: { type: 'final' } } });
    expect(problemsOf({ name: 'toy', version: 1, machine: toy })).toEqual(
      expect.arrayContaining([
        "state 'planning' is missing",
        "state 'succeeded' is missing",
        "top-level state 'done' is not one of the six public states (nest it inside one)",
        "the root does not invoke the 'deadline' actor",
        "state 'pending' does not take 'start'",
      ]),
    );
    const deaf = extendRunMachine({
      name: 'deaf',
      version: 1,
      states: ({ executing, planning, ...rest }) => {
        const on = { ...executing.on };
        delete on.need_approval;
        return { ...rest, executing: { ...executing, on }, planning: { ...planning, invoke: [] } };
      },
    });
    expect(problemsOf(deaf)).toEqual([
      "state 'planning' does not invoke the 'planner' actor",
      "state 'executing' does not take 'need_approval'",
    ]);
    const extra = extendRunMachine({
      name: 'extra',
      version: 1,
      states: (stock) => ({ ...stock, review: { on: { start: 'planning' } } }),
    });
    expect(problemsOf(extra)).toEqual([
      "top-level state 'review' is not one of the six public states (nest it inside one)",
    ]);
    expect(problemsOf({ ...twoApprovers, name: 'Two Approvers', version: 0 })).toEqual([
      "name 'Two Approvers' is not a lowercase name ([a-z][a-z0-9_.-]*, at most 64)",
      'version 0 is not a positive integer',
    ]);
    // Nothing was created or opened.
    expect(existsSync(database)).toBe(false);
  });
});
