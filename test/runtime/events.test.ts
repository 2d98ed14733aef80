import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type Planner, type RunEventRecord } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';
import { BUFFER_LIMIT } from '../../src/runtime/read/follow.js';

describe('events', () => {
  it('streams committed events live, in order, and ends after the terminal one', async () => {
    const { db, effects } = tempFiles();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated = defineTool({
      name: 'gated',
      description: 'waits for the test',
      input: z.object({}),
      effect: 'read',
      risk: 'low',
      execute: async () => {
        await gate;
        return 'opened';
      },
    });
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'gated', args: {} }] },
        { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'v' } }] },
        { type: 'final', answer: 'ok' },
      ]),
      tools: [gated, ...createWorld(effects).all()],
    });
    const run = await runtime.start({ input: 'x' });
    const live: RunEventRecord[] = [];
    const following = (async () => {
      for await (const event of runtime.events(run.id)) live.push(event);
    })();
    // Live: the call the tool is held in arrives while the run cannot have ended, and is the last event so far.
    await waitUntil(() => live.some((e) => e.type === 'action'), 'the held call to be streamed');
    expect(live.at(-1)?.type).toBe('action');
    release();
    await following;
    expect(live.map((e) => e.seq)).toEqual(live.map((_, i) => i + 1));
    expect(live.at(-1)!.data.to).toBe('succeeded');

    // A late reader after seq 5 gets exactly the rest.
    const rest: number[] = [];
    for await (const event of runtime.events(run.id, { after: 5 })) rest.push(event.seq);
    expect(rest).toEqual(live.slice(5).map((e) => e.seq));
    expect(readEffects(effects)).toHaveLength(1);
  });

  it("publishes a step's drafts after the events committed before it, never ahead of them", async () => {
    const { db, effects } = tempFiles();
    const world = createWorld(effects);
    const scripted = createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'v' } }] },
      { type: 'final', answer: 'ok' },
    ]);
    // A model whose first token arrives at once, while the previous step's events are being committed.
    // It answers once the reader has the draft, as a model's answer ends its stream.
    let drafted: () => void = () => undefined;
    const seen = new Promise<void>((resolve) => (drafted = resolve));
    const planner: Planner = {
      async next(request) {
        // Step 0 streams before any reader can subscribe (the run is just started): only later steps draft.
        if (request.stepIndex > 0) {
          request.onDraft?.(`text of step ${request.stepIndex}`);
          await seen;
        }
        return scripted.next(request);
      },
    };
    const runtime = openRuntime({ database: db, planner, tools: world.all() });
    const run = await runtime.start({ input: 'x' });
    const live: RunEventRecord[] = [];
    for await (const event of runtime.events(run.id)) {
      live.push(event);
      if (event.type === 'draft') drafted();
    }
    const order = live.map((e) =>
      e.type === 'draft' ? `draft ${String(e.data.text)}` : e.type === 'state' ? `${String(e.data.to)}` : e.type,
    );
    expect(order).toEqual([
      'run.created',
      'planning',
      'step',
      'executing',
      'action',
      'result',
      'planning',
      'draft text of step 1',
      'step',
      'executing',
      'succeeded',
    ]);
    // A draft carries the seq of the last event before it, so a reader can place it.
    const draft = live.findIndex((e) => e.type === 'draft');
    expect(live[draft]!.seq).toBe(live[draft - 1]!.seq);
  });

  it('passes XState inspection events to the inspect tap', async () => {
    const { db, effects } = tempFiles();
    const types = new Set<string>();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([{ type: 'final', answer: 'ok' }]),
      tools: createWorld(effects).all(),
      inspect: (event) => types.add(event.type),
    });
    await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(types).toContain('@xstate.snapshot');
    expect(types).toContain('@xstate.event');
  });

  it('releases wait() and events() when the runtime closes', async () => {
    const { db } = tempFiles();
    const stuck = defineTool({
      name: 'stuck',
      description: 'never finishes on its own',
      input: z.object({}),
      effect: 'read',
      risk: 'low',
      execute: (_input, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', reject)),
    });
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'stuck', args: {} }] }]),
      tools: [stuck],
    });
    const run = await runtime.start({ input: 'x' });
    const waited = runtime.wait(run.id);
    const seen: string[] = [];
    const followed = (async () => {
      for await (const event of runtime.events(run.id)) seen.push(event.type);
    })();
    // Closed while the tool is stuck and both are waiting on the run.
    await waitUntil(() => seen.includes('action'), 'the stuck call to be streamed');
    await runtime.close();
    await expect(waited).rejects.toMatchObject({ code: 'run.closed' });
    await followed;
    expect(seen).toContain('action');
  });

  it('follows a run that another runtime on the same file drives', async () => {
    const { db, effects } = tempFiles();
    const options = {
      database: db,
      planner: createScriptedPlanner([
        { type: 'tool_calls' as const, calls: [{ tool: 'world.unsafe', args: { value: 'v' } }] },
        { type: 'final' as const, answer: 'ok' },
      ]),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
    };
    const driver = openRuntime(options);
    const watcher = openRuntime({ ...options, recover: false });
    const run = await driver.wait((await driver.start({ input: 'x' })).id);
    const seen: RunEventRecord[] = [];
    const following = (async () => {
      for await (const event of watcher.events(run.id)) seen.push(event);
    })();
    // The decision is made once the watcher has read what was committed so far: it then follows live.
    await waitUntil(
      async () => seen.length === (await storeOf(driver).listEvents(run.id)).length,
      'the watcher to catch up',
    );
    await driver.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    await driver.wait(run.id);
    await following;
    expect(seen.map((e) => e.seq)).toEqual((await storeOf(driver).listEvents(run.id)).map((e) => e.seq));
    expect(seen.at(-1)!.data.to).toBe('succeeded');
  });

  it('gives a reader that fell far behind every event once, in order, read on from the log', async () => {
    const { db, effects } = tempFiles();
    const steps = 400;
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner((request) =>
        request.stepIndex < steps
          ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: String(request.stepIndex) } }] }
          : { type: 'final', answer: 'long' },
      ),
      tools: [createWorld(effects).read],
    });
    const run = await runtime.start({ input: 'x', options: { maxSteps: steps + 1 } });
    const reader = runtime.events(run.id);
    // Subscribed (the first event read), then not read again until the run has ended.
    const first = await reader.next();
    expect(first.value).toMatchObject({ seq: 1, type: 'run.created' });
    const ended = await runtime.wait(run.id);
    expect(ended.status).toBe('succeeded');
    const total = (await runtime.readEvents(run.id, { limit: 10_000 })).length;
    expect(total).toBeGreaterThan(BUFFER_LIMIT);
    const seqs = [1];
    for await (const event of reader) if (event.type !== 'draft') seqs.push(event.seq);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });

  it('stops following when its signal is aborted', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'v' } }] }]),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
    });
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('waiting_human');
    const stop = new AbortController();
    const seen: RunEventRecord[] = [];
    const following = (async () => {
      for await (const event of runtime.events(run.id, { signal: stop.signal })) seen.push(event);
    })();
    await expect.poll(() => seen.at(-1)?.type).toBe('state');
    stop.abort();
    await following;
    expect(seen.map((e) => e.seq)).toEqual((await runtime.readEvents(run.id)).map((e) => e.seq));
    expect((await runtime.get(run.id)).status).toBe('waiting_human');
  });
});
