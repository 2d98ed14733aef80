/**
 * Forking runs (`runtime.fork`), on a SQLite file and on PostgreSQL: the demo run forked at
 * every step (its copied events fold to the source's state there, no tool ran and no planner
 * was asked for the copied steps, the fork finishes), a fork at the approval step with an edited
 * file list, a fork's repeat of an unsafe effect (waits, then runs only when a person allows),
 * of an idempotent one (the source's key), and bad requests refused with nothing written.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventJson, FoldState } from '../../inspector/types.js';
import { foldEvents } from '../../inspector/fold.js';
import {
  BatonError,
  createScriptedPlanner,
  defineTool,
  type AnyTool,
  type Planner,
  type Run,
  type Runtime,
} from '../../src/index.js';
import { DEMO_TOOLS, ensureDemoConfigs, toDemoStartRequest } from '../../src/demo/index.js';
import { createDemoPlanner } from '../../src/demo/demo-planner.js';
import { toEventJson } from '../../src/server/index.js';
import { ALL_DIALECTS, freshDatabaseOf, rowsOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { tempDir } from '../helpers/temp.js';
import { scaled } from '../helpers/limits.js';
import { outageAgent, type Outage } from '../helpers/outage.js';

/** Every planner call and tool execution, by run and step. */
interface Counter {
  planned: { runId: string; step: number }[];
  ran: { runId: string; step: number; tool: string; args: unknown; key: string }[];
}

function stepOf(callId: string): number {
  return Number(/\.s(\d+)\.c\d+/.exec(callId)?.[1] ?? -1);
}

function counting(planner: Planner, tools: readonly AnyTool[], counter: Counter) {
  return {
    planner: {
      ...planner,
      next(request: Parameters<Planner['next']>[0]) {
        counter.planned.push({ runId: request.runId, step: request.stepIndex });
        return planner.next(request);
      },
    } satisfies Planner,
    tools: tools.map((tool): AnyTool => ({
      ...tool,
      execute: (args: never, ctx: Parameters<AnyTool['execute']>[1]) => {
        counter.ran.push({
          runId: ctx.runId,
          step: stepOf(ctx.toolCallId),
          tool: tool.name,
          args,
          key: ctx.idempotencyKey,
        });
        return tool.execute(args, ctx);
      },
    })),
  };
}

async function wire(runtime: Runtime, runId: string): Promise<EventJson[]> {
  return (await eventsOf(runtime, runId)).map((event) => toEventJson(event) as EventJson);
}

/** What the fold says of a run's story, with the run's own id written as `RUN`. */
function story(state: FoldState, runId: string): unknown {
  // The fork's own run.created (session, limits, deadline) and its numbering are its own.
  const rest: Partial<FoldState> = { ...state };
  delete rest.seq;
  delete rest.sessionId;
  delete rest.limits;
  delete rest.deadlineAt;
  return JSON.parse(JSON.stringify(rest).replaceAll(runId, 'RUN'));
}

/** Waits for the run to settle, approving every approval on the way. */
async function finish(runtime: Runtime, runId: string): Promise<Run> {
  for (;;) {
    const run = await runtime.wait(runId);
    if (run.status !== 'waiting_human') return run;
    await runtime.approve(runId, run.pendingApprovalId!, { by: 'alice' });
  }
}

describe.each(ALL_DIALECTS)('fork (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  async function demo() {
    const { database } = await freshDatabaseOf(dialect);
    const dir = tempDir();
    ensureDemoConfigs(dir);
    const counter: Counter = { planned: [], ran: [] };
    const { planner, tools } = counting(createDemoPlanner(), DEMO_TOOLS, counter);
    const runtime = openRuntime({ database, planner, tools });
    return { runtime, dir, counter, database };
  }

  it('forks a finished demo run at every step: copies fold to the source, nothing copied runs again, the fork finishes', async () => {
    const { runtime, dir, counter } = await demo();
    const source = await runtime.start(toDemoStartRequest(dir, 'alice'));
    const done = await finish(runtime, source.id);
    expect(done.status).toBe('succeeded');
    const steps = (await runtime.steps(source.id)).length;
    expect(steps).toBe(4);
    const sourceEvents = await wire(runtime, source.id);
    const sourceCalls = await runtime.toolCalls(source.id);

    for (let k = 0; k < steps; k += 1) {
      const fork = await runtime.fork(source.id, { atStep: k, by: 'alice' });
      expect(fork.forkedFrom).toEqual({ runId: source.id, step: k });
      expect(fork.id).not.toBe(source.id);
      const ended = await finish(runtime, fork.id);
      expect(ended.status, `fork at ${k}`).toBe('succeeded');

      const events = await wire(runtime, fork.id);
      expect(events[0]).toMatchObject({
        type: 'run.created',
        data: { forked_from: { run_id: source.id, step: k }, repeat_effects: 'ask', by: 'alice' },
      });
      const copied = (events[0]!.data.copied as { events: number }).events;
      // The source's first event of step k: everything before it is in the fork, folded alike.
      const cut = sourceEvents.find(
        (e) => e.seq > 1 && typeof e.data.step_index === 'number' && e.data.step_index >= k,
      )!;
      expect(copied).toBe(cut.seq - 2);
      expect(story(foldEvents(events, copied + 1), fork.id)).toEqual(
        story(foldEvents(sourceEvents, cut.seq - 1), source.id),
      );
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

      // No planner call and no tool for the copied steps; every later step planned here.
      const planned = counter.planned.filter((p) => p.runId === fork.id).map((p) => p.step);
      expect(Math.min(...planned)).toBe(k);
      expect(counter.ran.filter((r) => r.runId === fork.id && r.step < k)).toEqual([]);

      // The copies: the source's rows with the fork's ids, marked where they came from.
      const calls = await runtime.toolCalls(fork.id);
      const copies = calls.filter((c) => c.stepIndex < k);
      expect(copies.map((c) => c.copiedFrom)).toEqual(sourceCalls.filter((c) => c.stepIndex < k).map((c) => c.id));
      for (const copy of copies) {
        const from = sourceCalls.find((c) => c.id === copy.copiedFrom)!;
        expect(copy).toMatchObject({ tool: from.tool, args: from.args, status: from.status, result: from.result });
        expect(copy.idempotencyKey).toBe(from.id);
      }
      expect((await runtime.steps(fork.id)).filter((s) => s.stepIndex < k).map((s) => s.decision)).toEqual(
        (await runtime.steps(source.id)).filter((s) => s.stepIndex < k).map((s) => s.decision),
      );
    }
    // The source is as it was; it lists its forks.
    expect(await wire(runtime, source.id)).toEqual(sourceEvents);
    expect(await runtime.get(source.id)).toMatchObject({ status: 'succeeded', updatedAt: done.updatedAt });
    const forks = await runtime.forks(source.id);
    expect(forks.map((f) => f.forkedFrom!.step).sort()).toEqual([0, 1, 2, 3]);
    expect((await runtime.list({ forkedFrom: source.id })).runs).toHaveLength(4);
  });

  it('gives the fork at step k the transcript the source had there', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const seen = new Map<string, unknown>();
    const echo = defineTool({
      name: 'echo',
      description: 'echo',
      input: z.object({ text: z.string() }),
      effect: 'read',
      risk: 'low',
      execute: ({ text }) => `echo: ${text}`,
    });
    const planner = createScriptedPlanner((request) => {
      seen.set(`${request.runId}:${request.stepIndex}`, request.messages);
      return request.stepIndex < 2
        ? { type: 'tool_calls', calls: [{ tool: 'echo', args: { text: `step ${request.stepIndex}` } }] }
        : { type: 'final', answer: 'done' };
    });
    const runtime = openRuntime({ database, planner, tools: [echo] });
    const earlier = await runtime.start({ input: 'first', sessionId: 's' });
    await runtime.wait(earlier.id);
    const source = await runtime.start({ input: 'second', sessionId: 's' });
    await runtime.wait(source.id);
    // A later run of the session: the fork must not see it.
    await runtime.wait((await runtime.start({ input: 'third', sessionId: 's' })).id);
    const fork = await runtime.fork(source.id, { atStep: 2 });
    expect((await runtime.wait(fork.id)).status).toBe('succeeded');
    expect(fork.sessionId).not.toBe(source.sessionId);
    const rename = (messages: unknown, id: string) => JSON.parse(JSON.stringify(messages).replaceAll(id, 'RUN'));
    expect(rename(seen.get(`${fork.id}:2`), fork.id)).toEqual(rename(seen.get(`${source.id}:2`), source.id));
    expect(JSON.stringify(seen.get(`${fork.id}:2`))).toContain('first');
    expect(JSON.stringify(seen.get(`${fork.id}:2`))).not.toContain('third');

    // Pruned, the fork takes its session's copied history with it; the source's session stays.
    const store = await rowsOf(runtime, database, dialect);
    const forkSession = `default:${fork.sessionId}`;
    expect((await store.listMessages(forkSession)).map((m) => m.content)).toEqual(['first', 'done', 'second', 'done']);
    const pruned = await runtime.prune({ finishedBefore: Date.now() + 1 });
    expect(pruned.runs).toBe(4);
    expect(pruned.sessions).toBe(2);
    expect(await store.listMessages(forkSession)).toEqual([]);
  });

  it('forks the waiting demo run at its approval step with an edited file list: that list is archived, once', async () => {
    const { runtime, dir, counter } = await demo();
    const source = await runtime.start(toDemoStartRequest(dir, 'alice'));
    const waiting = await runtime.wait(source.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'approval' });
    const proposed = (await runtime.steps(source.id))[2]!.decision;
    expect(proposed.type).toBe('tool_calls');
    const files = (proposed as { calls: { args: { files: string[] } }[] }).calls[0]!.args.files;
    expect(files.length).toBeGreaterThan(1);
    const kept = files.slice(0, 1);
    const fork = await runtime.fork(source.id, {
      atStep: 2,
      decision: { type: 'tool_calls', calls: [{ tool: 'configs.archive', args: { files: kept } }] },
      by: 'alice',
    });
    expect((await finish(runtime, fork.id)).status).toBe('succeeded');
    const archives = counter.ran.filter((r) => r.tool === 'configs.archive');
    expect(archives).toEqual([expect.objectContaining({ runId: fork.id, args: { files: kept } })]);
    expect(readdirSync(join(dir, 'archive'))).toEqual(kept);
    for (const name of files.slice(1)) expect(existsSync(join(dir, name))).toBe(true);
    // The planner was not asked for the given step; the step says who gave it.
    expect(counter.planned.filter((p) => p.runId === fork.id).map((p) => p.step)).toEqual([3]);
    const step = (await eventsOf(runtime, fork.id)).find((e) => e.type === 'step' && e.data.step_index === 2);
    expect(step?.data).toMatchObject({ given_by: 'alice' });
    // The source still waits on its own approval, untouched.
    expect(await runtime.get(source.id)).toMatchObject({
      status: 'waiting_human',
      pendingApprovalId: waiting.pendingApprovalId,
      updatedAt: waiting.updatedAt,
    });
  });

  describe('effects the source already had', () => {
    async function shop(effect: 'unsafe' | 'idempotent') {
      const { database } = await freshDatabaseOf(dialect);
      const charges: { key: string; runId: string }[] = [];
      const charge = defineTool({
        name: 'shop.charge',
        description: 'Charge a card',
        input: z.object({ amount: z.number() }),
        effect,
        risk: 'low',
        execute: ({ amount }, ctx) => {
          charges.push({ key: ctx.idempotencyKey, runId: ctx.runId });
          return { charged: amount };
        },
      });
      const planner = createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'shop.charge', args: { amount: 5 } }] },
        { type: 'final', answer: 'charged' },
      ]);
      const runtime = openRuntime({ database, planner, tools: [charge] });
      const source = await runtime.start({ input: 'charge me' });
      expect((await runtime.wait(source.id)).status).toBe('succeeded');
      expect(charges).toHaveLength(1);
      return { runtime, source, charges };
    }

    it('a plain rerun of a step whose unsafe call ran waits for a person (repeat_effect) and runs it only when allowed', async () => {
      const { runtime, source, charges } = await shop('unsafe');
      const [sourceCall] = await runtime.toolCalls(source.id);
      const fork = await runtime.fork(source.id, { atStep: 0 });
      const waiting = await runtime.wait(fork.id);
      expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'repeat_effect' });
      expect(charges).toHaveLength(1);
      const approval = (await runtime.approvals(fork.id)).find((a) => a.id === waiting.pendingApprovalId)!;
      expect(approval).toMatchObject({
        kind: 'repeat',
        status: 'pending',
        request: {
          kind: 'repeat',
          source: { runId: source.id, toolCallId: sourceCall!.id, status: 'succeeded', result: sourceCall!.result },
        },
      });
      await runtime.approve(fork.id, approval.id, { by: 'alice' });
      expect((await runtime.wait(fork.id)).status).toBe('succeeded');
      expect(charges).toEqual([
        { key: sourceCall!.id, runId: source.id },
        { key: `${fork.id}.s0.c0`, runId: fork.id },
      ]);
      const action = (await eventsOf(runtime, fork.id)).find((e) => e.type === 'action');
      expect(action?.data).toMatchObject({ repeat_of: sourceCall!.id });
    });

    it('a refused repeat does not run and the model is told; done takes the source result; allow runs without asking', async () => {
      const { runtime, source, charges } = await shop('unsafe');
      const refused = await runtime.fork(source.id, { atStep: 0 });
      const wait1 = await runtime.wait(refused.id);
      await runtime.reject(refused.id, wait1.pendingApprovalId!, { by: 'alice', reason: 'charged already' });
      expect((await runtime.wait(refused.id)).status).toBe('succeeded');
      expect((await runtime.toolCalls(refused.id))[0]).toMatchObject({ status: 'rejected', copiedFrom: null });

      const taken = await runtime.fork(source.id, { atStep: 0 });
      const wait2 = await runtime.wait(taken.id);
      await runtime.approve(taken.id, wait2.pendingApprovalId!, { by: 'alice', resolution: 'done' });
      expect((await runtime.wait(taken.id)).status).toBe('succeeded');
      const [sourceCall] = await runtime.toolCalls(source.id);
      expect((await runtime.toolCalls(taken.id))[0]).toMatchObject({
        status: 'succeeded',
        copiedFrom: sourceCall!.id,
        result: expect.objectContaining({ content: { charged: 5 }, recordedBy: 'alice' }),
      });
      expect(charges).toHaveLength(1);

      const allowed = await runtime.fork(source.id, { atStep: 0, repeatEffects: 'allow' });
      expect((await runtime.wait(allowed.id)).status).toBe('succeeded');
      expect(charges).toHaveLength(2);
      const created = (await eventsOf(runtime, allowed.id))[0]!;
      expect(created.data).toMatchObject({ repeat_effects: 'allow' });
    });

    it("compensating a fork undoes only the fork's own effects, never its copies of the source's", async () => {
      const { database } = await freshDatabaseOf(dialect);
      const undone: unknown[] = [];
      const charge = defineTool({
        name: 'shop.charge',
        description: 'Charge a card',
        input: z.object({ amount: z.number() }),
        output: z.object({ charged: z.number() }),
        effect: 'idempotent',
        risk: 'low',
        execute: ({ amount }) => ({ charged: amount }),
        compensate: (input) => {
          undone.push(input);
          return { refunded: input.amount };
        },
      });
      const ship = defineTool({
        name: 'shop.ship',
        description: 'Ship (a person approves)',
        input: z.object({}),
        effect: 'idempotent',
        risk: 'high',
        execute: () => 'shipped',
      });
      const planner = createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'shop.charge', args: { amount: 5 } }] },
        { type: 'tool_calls', calls: [{ tool: 'shop.charge', args: { amount: 7 } }] },
        { type: 'tool_calls', calls: [{ tool: 'shop.ship', args: {} }] },
        { type: 'final', answer: 'shipped' },
      ]);
      const runtime = openRuntime({ database, planner, tools: [charge, ship] });
      const source = await runtime.start({ input: 'order' });
      await finish(runtime, source.id);
      // The fork copies the first charge, charges 9 itself, then waits to ship.
      const fork = await runtime.fork(source.id, {
        atStep: 1,
        decision: { type: 'tool_calls', calls: [{ tool: 'shop.charge', args: { amount: 9 } }] },
      });
      expect(await runtime.wait(fork.id)).toMatchObject({ status: 'waiting_human' });
      await runtime.cancel(fork.id, { compensate: true });
      const ended = await runtime.wait(fork.id);
      expect(ended.compensation).toMatchObject({ status: 'done', compensated: [{ toolCallId: `${fork.id}.s1.c0` }] });
      expect(undone).toEqual([{ amount: 9 }]);
    });

    it("an idempotent repeat runs at once with the source's idempotency key", async () => {
      const { runtime, source, charges } = await shop('idempotent');
      const fork = await runtime.fork(source.id, { atStep: 0 });
      expect((await runtime.wait(fork.id)).status).toBe('succeeded');
      const [sourceCall] = await runtime.toolCalls(source.id);
      expect(charges.map((c) => c.key)).toEqual([sourceCall!.id, sourceCall!.id]);
      expect((await runtime.toolCalls(fork.id))[0]).toMatchObject({ idempotencyKey: sourceCall!.id, copiedFrom: null });
    });
  });

  it('forks a run while another runtime drives it: a consistent prefix, and the source goes on unchanged by it', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const outage: Outage = { down: false, planned: [], lookups: [] };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = '';
    const driving = openRuntime({
      database,
      ...outageAgent(outage),
      // The source waits in planning at step 1 until released: a run in the middle of its life.
      hooks: {
        beforeActor: ({ actor, runId, stepIndex }) =>
          actor === 'planner' && stepIndex === 1 && runId === holding ? held : undefined,
      },
    });
    const source = await driving.start({ input: 'held', sessionId: 'held' });
    holding = source.id;
    const deadline = Date.now() + scaled(30_000);
    while ((await driving.get(source.id)).status !== 'planning' || (await driving.get(source.id)).usage.llmCalls < 1) {
      if (Date.now() > deadline) throw new Error('the source never reached step 1');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // On PostgreSQL another process's runtime, on SQLite this one's: both read the file.
    const forking =
      dialect === 'postgres' ? openRuntime({ database, ...outageAgent(outage), recover: false }) : driving;
    const before = await eventsOf(driving, source.id);
    const fork = await forking.fork(source.id, { atStep: 1 });
    expect((await forking.wait(fork.id)).status).toBe('succeeded');
    const calls = await forking.toolCalls(fork.id);
    expect(calls.filter((c) => c.stepIndex < 1).map((c) => [c.copiedFrom, c.status])).toEqual([
      [`${source.id}.s0.c0`, 'succeeded'],
    ]);
    expect(await eventsOf(driving, source.id)).toEqual(before);
    release();
    expect((await driving.wait(source.id)).status).toBe('succeeded');
    expect(outage.lookups.filter((id) => id === fork.id)).toEqual([]);
  });

  it('reruns 100 runs a model outage failed: each forked at the step that failed, succeeding; run again, it creates nothing', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const outage: Outage = { down: true, planned: [], lookups: [] };
    const runtime = openRuntime({ database, ...outageAgent(outage) });
    const failed = await Promise.all(Array.from({ length: 100 }, (_, i) => runtime.start({ input: `q${i}` })));
    for (const run of failed) {
      expect(await runtime.wait(run.id)).toMatchObject({ status: 'failed', failure: { code: 'planner.unavailable' } });
    }
    outage.down = false;
    const lookupsBefore = outage.lookups.length;
    const dry = await runtime.rerun({ failureCode: 'planner.unavailable', dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, matched: 100, created: 0, existing: 0 });
    expect(await runtime.list({ forkedFrom: failed[0]!.id })).toMatchObject({ runs: [] });
    const report = await runtime.rerun({ failureCode: 'planner.unavailable', batchSize: 25 });
    expect(report).toMatchObject({ matched: 100, created: 100, existing: 0, failed: [] });
    expect(new Set(report.reruns.map((r) => r.sourceRunId))).toEqual(new Set(failed.map((r) => r.id)));
    for (const entry of report.reruns) {
      expect(entry.atStep).toBe(1);
      expect(await runtime.wait(entry.runId!)).toMatchObject({
        status: 'succeeded',
        forkedFrom: { runId: entry.sourceRunId, step: 1 },
      });
    }
    // The copied lookups did not run again; each fork asked the planner for step 1 only.
    expect(outage.lookups.length).toBe(lookupsBefore);
    const forkIds = new Set(report.reruns.map((r) => r.runId));
    expect(outage.planned.filter((p) => forkIds.has(p.runId)).every((p) => p.step === 1)).toBe(true);
    const again = await runtime.rerun({ failureCode: 'planner.unavailable' });
    expect(again).toMatchObject({ matched: 100, created: 0, existing: 100 });
    expect(new Set(again.reruns.map((r) => r.runId))).toEqual(forkIds);
    expect((await runtime.list({ status: 'succeeded', limit: 1000 })).runs).toHaveLength(100);
  });

  it('plans the fork with the forking runtime: another planner, other instructions, another budget', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const outage: Outage = { down: false, planned: [], lookups: [] };
    const first = openRuntime({ database, ...outageAgent(outage) });
    const source = await first.start({ input: 'q' });
    expect((await first.wait(source.id)).answer).toBe('answered: q');
    await first.close();
    // Another agent's runtime on the same database (its own planner and tools' versions): the
    // fork's step 1 is its planner's; the copied lookup is not run again by either.
    const { tools } = outageAgent(outage);
    const other = openRuntime({
      database,
      agent: 'reviewer',
      tools,
      planner: createScriptedPlanner((request) => ({ type: 'final', answer: `reviewed at step ${request.stepIndex}` })),
    });
    // Forked for another agent only when the request says so.
    await expect(other.fork(source.id, { atStep: 1 })).rejects.toMatchObject({
      failure: { code: 'run.agent_mismatch', details: { run_agent: 'default', runtime_agent: 'reviewer' } },
    });
    await expect(other.fork(source.id, { atStep: 1, agent: 'someone' })).rejects.toMatchObject({
      failure: { code: 'run.agent_mismatch' },
    });
    const fork = await other.fork(source.id, { atStep: 1, agent: 'reviewer' });
    expect(await other.wait(fork.id)).toMatchObject({
      status: 'succeeded',
      answer: 'reviewed at step 1',
      agent: { name: 'reviewer' },
    });
    // Its budget is its own: no planner call left, the step cannot be planned.
    const starved = await other.fork(source.id, {
      atStep: 1,
      agent: 'reviewer',
      options: { budget: { maxLlmCalls: 0 } },
    });
    expect(await other.wait(starved.id)).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    expect(outage.lookups).toEqual([source.id]);
  });

  it('refuses bad fork requests with typed errors and writes nothing', async () => {
    const { runtime: first, dir, database } = await demo();
    let runtime = first;
    const source = await runtime.start(toDemoStartRequest(dir, 'alice'));
    await finish(runtime, source.id);
    const refusal = async (request: Parameters<Runtime['fork']>[1], id = source.id) => {
      const error = await runtime.fork(id, request).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(BatonError);
      return (error as BatonError).failure;
    };
    expect(await refusal({ atStep: 9 })).toMatchObject({
      code: 'input.invalid',
      details: { at_step: 9, last_step: 3 },
    });
    expect(await refusal({ atStep: -1 })).toMatchObject({
      code: 'input.invalid',
      details: { at_step: -1, last_step: 3 },
    });
    // The step limit counts the copied steps: a fork past it could plan nothing.
    expect(await refusal({ atStep: 3, options: { maxSteps: 3 } })).toMatchObject({
      code: 'input.invalid',
      details: { at_step: 3, max_steps: 3 },
    });
    // A decision is exactly a decision: no field it does not have.
    const extra = { type: 'final', answer: 'x', zzz: 1 } as unknown as NonNullable<
      Parameters<Runtime['fork']>[1]['decision']
    >;
    expect((await refusal({ atStep: 3, decision: extra })).code).toBe('input.invalid');
    expect(await refusal({ atStep: 0 }, 'run_nope')).toMatchObject({ code: 'run.not_found' });
    // The given decision of a fork is no model call.
    const given = await runtime.fork(source.id, { atStep: 3, decision: { type: 'final', answer: 'given' } });
    expect(await finish(runtime, given.id)).toMatchObject({ answer: 'given', usage: { llmCalls: 0 } });
    expect((await refusal({ atStep: 1, input: 'other' })).code).toBe('input.invalid');
    const bad = await refusal({
      atStep: 2,
      decision: { type: 'tool_calls', calls: [{ tool: 'configs.archive', args: { files: ['../x'] } }] },
    });
    expect(bad).toMatchObject({
      code: 'input.invalid',
      details: { issues: [expect.objectContaining({ path: ['decision', 'calls', 0, 'args', 'files', 0] })] },
    });
    const unknown = await refusal({ atStep: 2, decision: { type: 'tool_calls', calls: [{ tool: 'rm', args: {} }] } });
    expect(unknown.details?.issues).toEqual([expect.objectContaining({ path: ['decision', 'calls', 0, 'tool'] })]);
    expect((await runtime.forks(source.id)).map((f) => f.id)).toEqual([given.id]);

    // A runtime whose agent lacks a tool the prefix called refuses to copy it, naming the tool.
    await runtime.close();
    runtime = openRuntime({
      database,
      planner: createDemoPlanner(),
      tools: DEMO_TOOLS.filter((t) => t.name !== 'fs.read'),
    });
    expect(await refusal({ atStep: 3 })).toMatchObject({ code: 'fork.tool_missing', details: { tools: ['fs.read'] } });
    expect((await runtime.fork(source.id, { atStep: 1 })).forkedFrom).toEqual({ runId: source.id, step: 1 });
  });
});
