import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type PlannerRequest } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { storeOf } from '../../src/runtime/internals.js';

describe('invalid tool calls', () => {
  it('shows the model the zod issues of invalid arguments as an observation', async () => {
    const { db, effects } = tempFiles();
    const requests: PlannerRequest[] = [];
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner((request) => {
        requests.push(request);
        return request.stepIndex === 0
          ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 42, extra: true } }] }
          : { type: 'final', answer: 'gave up' };
      }),
      tools: createWorld(effects).all(),
    });
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('succeeded');
    const observation = requests[1]!.messages.at(-1)!;
    expect(observation.role).toBe('tool');
    expect(observation.content).toContain('tool.invalid_arguments');
    expect(observation.content).toContain('- value: Invalid input: expected string, received number');
    expect(readEffects(effects)).toEqual([]);
    expect((await storeOf(runtime).listToolCalls(run.id))[0]).toMatchObject({ status: 'invalid', attempts: 0 });
  });

  it('tells the model about an unknown tool and lists the known ones', async () => {
    const { db, effects } = tempFiles();
    let observation = '';
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner((request) => {
        if (request.stepIndex === 0) return { type: 'tool_calls', calls: [{ tool: 'nope', args: {} }] };
        observation = request.messages.at(-1)!.content;
        return { type: 'final', answer: 'ok' };
      }),
      tools: createWorld(effects).all(),
    });
    await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(observation).toContain("Unknown tool 'nope'");
    expect(observation).toContain('world.read, world.idempotent, world.reconcilable, world.unsafe');
  });

  it('ends the run with loop_detected when the same invalid call is repeated three times', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(() => ({
        type: 'tool_calls',
        calls: [{ tool: 'world.read', args: { value: 7 } }],
      })),
      tools: createWorld(effects).all(),
    });
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('failed');
    expect(run.stopReason).toBe('loop_detected');
    expect(run.failure?.code).toBe('run.loop_detected');
    expect((await storeOf(runtime).listToolCalls(run.id)).map((c) => c.status)).toEqual([
      'invalid',
      'invalid',
      'invalid',
    ]);
  });

  it('does not count different failing calls as a loop', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner((request) =>
        request.stepIndex < 4
          ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: request.stepIndex } }] }
          : { type: 'final', answer: 'ok' },
      ),
      tools: createWorld(effects).all(),
    });
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('succeeded');
  });

  it('denies a destructive tool by default and tells the model', async () => {
    const { db, effects } = tempFiles();
    let observation = '';
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner((request) => {
        if (request.stepIndex === 0)
          return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'rm' } }] };
        observation = request.messages.at(-1)!.content;
        return { type: 'final', answer: 'ok' };
      }),
      tools: createWorld(effects, { risk: 'destructive' }).all(),
    });
    await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(observation).toContain('policy.denied');
    expect(readEffects(effects)).toEqual([]);
  });

  it('lets a user policy decide from the tool, the arguments and the run context', async () => {
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'a' } }] },
        { type: 'final', answer: 'ok' },
      ]),
      tools: createWorld(effects).all(),
      policy: ({ tool, context }) =>
        tool.effect === 'unsafe' && context.tenant_id === 'acme'
          ? { decision: 'deny', reason: 'acme is read-only' }
          : undefined,
    });
    await runtime.wait((await runtime.start({ input: 'x', context: { tenant_id: 'acme' } })).id);
    expect(readEffects(effects)).toEqual([]);
    await runtime.wait((await runtime.start({ input: 'x', context: { tenant_id: 'other' } })).id);
    expect(readEffects(effects)).toHaveLength(1);
  });

  it('tells a policy when untrusted tool output has entered the run, so it can be stricter', async () => {
    const { db, effects } = tempFiles();
    const seen: boolean[] = [];
    const world = createWorld(effects).all();
    // A read whose output others write (a web page): it does not vouch for it.
    const page = { ...world.find((t) => t.name === 'world.read')!, name: 'web.page', trustedOutput: false };
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'web.page', args: { value: 'page' } }] },
        { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'send' } }] },
        { type: 'final', answer: 'ok' },
      ]),
      tools: [...world, page],
      policy: ({ untrusted }) => {
        seen.push(untrusted);
        return untrusted ? 'needs_approval' : undefined;
      },
    });
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(seen).toEqual([false, true]);
    expect(run.status).toBe('waiting_human');
  });
});
