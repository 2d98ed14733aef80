import { join } from 'node:path';
import { getStateNodes } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { runMachine } from '../../machines/run-machine.js';
import { MACHINE_EVENT_TYPES, RUN_STATUSES, type RunEvent, type RunStatus } from '../../machines/types.js';
import { z } from 'zod';
import { createRuntime, createScriptedPlanner, defineTool, type Runtime } from '../../src/index.js';
import { createGates, createRunModel, MODEL_LIMITS, runModelEvents } from '../../src/testing/index.js';
import { tempDir } from '../helpers/temp.js';
import { storeOf } from '../../src/runtime/internals.js';

/** One sample of each event type, as the runtime's actors or a caller would send it. */
function sampleEvents(): Map<string, RunEvent> {
  const initial = createActor(runMachine.provide({}), {
    input: { runId: 'x', limits: MODEL_LIMITS, deadlineAt: null },
  }).getSnapshot();
  const samples = new Map<string, RunEvent>();
  for (const event of runModelEvents(initial)) if (!samples.has(event.type)) samples.set(event.type, event);
  return samples;
}

/** The (state, event type) pairs the machine's definition has no transition for. */
function illegalPairs(): [RunStatus, string][] {
  const nodes = new Map(getStateNodes(runMachine.root).map((node) => [node.key, node]));
  const pairs: [RunStatus, string][] = [];
  for (const status of RUN_STATUSES) {
    for (const type of MACHINE_EVENT_TYPES) if (!nodes.get(status)!.transitions.has(type)) pairs.push([status, type]);
  }
  return pairs;
}

/** Everything the database knows about a run, to show an illegal event changed nothing. */
async function fingerprint(runtime: Runtime, runId: string): Promise<string> {
  const { sqlite } = storeOf(runtime).db;
  const count = (table: string) =>
    (sqlite.prepare(`select count(*) as n from ${table} where run_id = ?`).get(runId) as { n: number }).n;
  return JSON.stringify({
    run: await storeOf(runtime).getRun(runId),
    events: count('events'),
    steps: count('steps'),
    toolCalls: count('tool_calls'),
    approvals: count('approvals'),
  });
}

/** A runtime holding a run in `status` (planning and executing: its actor is held at its gate). */
async function holdIn(status: Exclude<RunStatus, 'pending'>) {
  const gates = createGates();
  const guarded = defineTool({
    name: 'guarded',
    description: 'needs approval',
    input: z.object({}),
    effect: 'idempotent',
    risk: 'high',
    execute: () => 'done',
  });
  const runtime = createRuntime({
    database: join(tempDir(), 'illegal.db'),
    planner: createScriptedPlanner(() =>
      status === 'succeeded'
        ? { type: 'final', answer: 'ok' }
        : { type: 'tool_calls', calls: [{ tool: 'guarded', args: {} }] },
    ),
    tools: [guarded],
    hooks: gates.hooks,
  });
  const { id: runId } = await runtime.start({ input: 'x' });
  const planner = await gates.next();
  if (status === 'failed') await runtime.cancel(runId);
  if (status !== 'planning' && status !== 'failed') {
    planner.release();
    const executor = await gates.next();
    if (status !== 'executing') executor.release();
  }
  await expect.poll(async () => (await runtime.get(runId)).status).toBe(status);
  return { runtime, runId };
}

describe('illegal events', () => {
  const samples = sampleEvents();
  const pairs = illegalPairs();

  it('lists every (state, event) pair the machine does not take', () => {
    const legal = createRunModel().edges.map((e) => `${e.source}:${e.event}`);
    for (const status of RUN_STATUSES) {
      for (const type of MACHINE_EVENT_TYPES) {
        const isIllegal = pairs.some(([s, t]) => s === status && t === type);
        expect(isIllegal, `${status} × ${type}`).toBe(!legal.includes(`${status}:${type}`));
      }
    }
    console.log(`illegal (state, event) pairs: ${pairs.length} of ${RUN_STATUSES.length * MACHINE_EVENT_TYPES.length}`);
  });

  it('refuses them in pending, where the machine itself says no', () => {
    const actor = createActor(runMachine.provide({}), {
      input: { runId: 'x', limits: MODEL_LIMITS, deadlineAt: null },
    });
    for (const [status, type] of pairs.filter(([s]) => s === 'pending')) {
      expect(actor.getSnapshot().value).toBe(status);
      expect(actor.getSnapshot().can(samples.get(type)!)).toBe(false);
    }
  });

  for (const status of ['planning', 'executing', 'waiting_human', 'succeeded', 'failed'] as const) {
    it(`refuses each illegal event in ${status} with run.invalid_transition and changes nothing`, async () => {
      const { runtime, runId } = await holdIn(status);
      try {
        const illegal = pairs.filter(([s]) => s === status).map(([, type]) => samples.get(type)!);
        if (status === 'waiting_human') {
          // Legal types, but not for this approval: the guard refuses them.
          illegal.push(
            { type: 'approved', approvalId: 'another' },
            { type: 'rejected', approvalId: 'another', terminate: false },
            { type: 'edited', approvalId: 'another' },
            { type: 'expired', approvalId: 'another', outcome: 'end' },
          );
          // For this approval, but not for its kind of wait (a step's approval): refused too.
          const approvalId = (await runtime.get(runId)).pendingApprovalId!;
          illegal.push({ type: 'answered', approvalId }, { type: 'extended', approvalId, limits: { maxSteps: 10 } });
        }
        expect(illegal.length).toBeGreaterThan(0);
        for (const event of illegal) {
          const before = await fingerprint(runtime, runId);
          const error = await runtime.send(runId, event).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error, `${status} × ${event.type}`).toMatchObject({
            code: 'run.invalid_transition',
            failure: { details: { state: status, event: event.type } },
          });
          expect((error as Error).message).toContain(`'${status}'`);
          expect((error as Error).message).toContain(`'${event.type}'`);
          expect(await fingerprint(runtime, runId)).toBe(before);
        }
      } finally {
        await runtime.close();
      }
    });
  }

  it('refuses a malformed event with input.invalid', async () => {
    const { runtime, runId } = await holdIn('waiting_human');
    try {
      await expect(runtime.send(runId, { type: 'approved' })).rejects.toMatchObject({ code: 'input.invalid' });
      await expect(runtime.send(runId, { type: 'fly' })).rejects.toMatchObject({ code: 'input.invalid' });
      expect((await runtime.get(runId)).status).toBe('waiting_human');
    } finally {
      await runtime.close();
    }
  });
});
