/**
 * A tree of runs ends as one: a parent that calls a manager agent, which calls a clerk agent whose
 * archive waits for approval, each level writing a note first (a compensable effect). Cancelling
 * the parent cancels the manager and the clerk; with `compensate`, every level's note is undone,
 * the deepest first. A child cancelled on its own is a failed call its parent's model is told of.
 * On a SQLite file and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentTool,
  BatonError,
  createScriptedPlanner,
  defineAgent,
  defineTool,
  type Run,
  type Runtime,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { openRuntime } from '../helpers/runtime.js';
import { lastObservation } from '../helpers/tree-agents.js';

/** What happened outside Baton: notes written and taken back, in order. */
type World = string[];

function noteTool(world: World) {
  return defineTool({
    name: 'note.write',
    description: 'Writes a note',
    input: z.object({ text: z.string() }),
    effect: 'idempotent',
    risk: 'low',
    execute: ({ text }) => {
      world.push(`write ${text}`);
      return { written: text };
    },
    compensate: ({ text }) => {
      world.push(`undo ${text}`);
    },
  });
}

/** Three levels: the parent notes and calls the manager, which notes and calls the clerk, which notes and archives. */
function threeLevels(world: World) {
  const archive = defineTool({
    name: 'files.archive',
    description: 'Archives a file',
    input: z.object({ file: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ file }) => {
      world.push(`archive ${file}`);
      return { archived: file };
    },
  });
  const clerk = defineAgent({
    name: 'clerk',
    instructions: 'You archive files.',
    tools: [noteTool(world), archive],
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'note.write', args: { text: 'clerk' } }] },
      { type: 'tool_calls', calls: [{ tool: 'files.archive', args: { file: 'a.json' } }] },
      (request) => ({ type: 'final', answer: `clerk: ${lastObservation(request)}` }),
    ]),
  });
  const manager = defineAgent({
    name: 'manager',
    instructions: 'You hand archiving to the clerk.',
    tools: [noteTool(world), agentTool(clerk)],
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'note.write', args: { text: 'manager' } }] },
      { type: 'tool_calls', calls: [{ tool: 'agent.clerk', args: { input: 'archive a.json' } }] },
      (request) => ({ type: 'final', answer: `manager: ${lastObservation(request)}` }),
    ]),
  });
  return {
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'note.write', args: { text: 'parent' } }] },
      { type: 'tool_calls', calls: [{ tool: 'agent.manager', args: { input: 'tidy up' } }] },
      (request) => ({ type: 'final', answer: `parent: ${lastObservation(request)}` }),
    ]),
    tools: [noteTool(world), agentTool(manager)],
  };
}

/** Resolves once the run has ended. */
async function ended(runtime: Runtime, runId: string): Promise<Run> {
  for (;;) {
    const run = await runtime.get(runId);
    if (run.status === 'succeeded' || run.status === 'failed') return run;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(ALL_DIALECTS)('a tree of runs (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  async function waitingTree(world: World) {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({ database, ...threeLevels(world) });
    const parent = await runtime.start({ input: 'tidy up' });
    const waiting = await runtime.wait(parent.id);
    const manager = `${parent.id}.s1.c0.child`;
    const clerk = `${manager}.s1.c0.child`;
    expect(waiting).toMatchObject({
      status: 'waiting_human',
      childWait: { runId: manager, asking: { runId: clerk, waitReason: 'approval' } },
    });
    expect(world).toEqual(['write parent', 'write manager', 'write clerk']);
    return { runtime, parent: parent.id, manager, clerk };
  }

  it('cancels the whole tree with the parent, and nothing the clerk was asked to do runs', async () => {
    const world: World = [];
    const { runtime, parent, manager, clerk } = await waitingTree(world);
    await runtime.cancel(parent, { reason: 'not today' });
    for (const id of [parent, manager, clerk]) {
      expect(await ended(runtime, id)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    }
    expect((await runtime.get(manager)).failure?.message).toContain(`its parent run '${parent}' ended`);
    // The clerk's approval, decided now on either id, runs nothing: its run has ended.
    const approvalId = `${clerk}.s1.approval`;
    for (const id of [parent, clerk]) {
      const late = await runtime.approve(id, approvalId, { by: 'alice' }).catch((error: unknown) => error);
      expect(late).toBeInstanceOf(BatonError);
    }
    expect(world).toEqual(['write parent', 'write manager', 'write clerk']);
  });

  it('undoes every level with compensate, the deepest first', async () => {
    const world: World = [];
    const { runtime, parent, manager, clerk } = await waitingTree(world);
    await runtime.cancel(parent, { compensate: true });
    for (const id of [parent, manager, clerk]) {
      expect(await ended(runtime, id)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    }
    expect(world).toEqual([
      'write parent',
      'write manager',
      'write clerk',
      'undo clerk',
      'undo manager',
      'undo parent',
    ]);
    for (const id of [parent, manager, clerk]) {
      expect((await runtime.get(id)).compensation?.compensated.map((c) => c.tool)).toEqual(['note.write']);
    }
  });

  it('answers a cancel of the parent once its children have ended too', async () => {
    const world: World = [];
    const { runtime, parent, manager, clerk } = await waitingTree(world);
    await runtime.cancel(parent, { reason: 'not today' });
    // No waiting: by the time cancel answers, the whole tree has ended.
    for (const id of [manager, clerk]) expect((await runtime.get(id)).status, id).toBe('failed');
  });

  it('ends a child whose parent ended in a runtime that could not end it, once a runtime that can opens', async () => {
    const world: World = [];
    const { database } = await freshDatabaseOf(dialect);
    const first = openRuntime({ database, ...threeLevels(world) });
    const parent = (await first.start({ input: 'tidy up' })).id;
    const manager = `${parent}.s1.c0.child`;
    const clerk = `${manager}.s1.c0.child`;
    expect((await first.wait(parent)).childWait?.asking?.runId).toBe(clerk);
    await first.close();
    // A runtime of the parent's agent without the agent tools: it ends the parent, not its children.
    const bare = openRuntime({ database, planner: createScriptedPlanner([]), tools: [], recover: false });
    expect(await bare.cancel(parent, { reason: 'not today' })).toMatchObject({ status: 'failed' });
    expect((await bare.get(manager)).status).toBe('waiting_human');
    await bare.close();
    // The parent's end asked its child to end, durably: the next runtime that can, does, down the tree.
    const next = openRuntime({ database, ...threeLevels(world) });
    for (const id of [manager, clerk]) {
      expect(await ended(next, id)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    }
    expect((await next.get(manager)).failure?.message).toContain(`its parent run '${parent}' ended (cancelled)`);
    expect(world).toEqual(['write parent', 'write manager', 'write clerk']);
  });

  it("tells the parent's model when a child is cancelled on its own", async () => {
    const world: World = [];
    const { runtime, parent, manager, clerk } = await waitingTree(world);
    await runtime.cancel(clerk, { reason: 'wrong file' });
    // The clerk's failure is the manager's failed call; the manager answers, and so does the parent.
    const done = await runtime.wait(parent);
    expect(done.status).toBe('succeeded');
    expect((await runtime.get(manager)).answer).toMatch(
      /^manager: .*did not finish its task: Run cancelled: wrong file/,
    );
    expect(done.answer).toMatch(/^parent: manager: /);
    expect(world).toEqual(['write parent', 'write manager', 'write clerk']);
  });
});
