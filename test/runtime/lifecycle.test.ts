/** A run's life from start to its end (states, events, ledger, session history), on a SQLite file and on PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { createRuntime, createScriptedPlanner, type Decision, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, rowsOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { scopeKey } from '../../src/runtime/model/tenant-keys.js';

const call = (tool: string, value: string): Decision => ({ type: 'tool_calls', calls: [{ tool, args: { value } }] });

describe.each(ALL_DIALECTS)('runtime lifecycle on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('takes a run from pending through planning and executing to succeeded', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const world = createWorld(effects);
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner([
        call('world.read', 'a'),
        call('world.unsafe', 'b'),
        { type: 'final', answer: 'all done' },
      ]),
      tools: world.all(),
    });
    const run = await runtime.start({ input: 'do two things' });
    expect(run.status).toBe('pending');
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    expect(done.answer).toBe('all done');
    expect(done.usage).toMatchObject({ steps: 3, llmCalls: 3, toolCalls: 2 });

    const events = await eventsOf(runtime, run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const states = events.filter((e) => e.type === 'state').map((e) => e.data.to);
    expect(states).toEqual(['planning', 'executing', 'planning', 'executing', 'planning', 'executing', 'succeeded']);
    expect(events[0]!.type).toBe('run.created');
    expect(events.filter((e) => e.type === 'action').map((e) => e.data.tool)).toEqual(['world.read', 'world.unsafe']);
    expect(readEffects(effects).map((e) => e.value)).toEqual(['a', 'b']);

    const calls = await (await rowsOf(runtime, database, dialect)).listToolCalls(run.id);
    expect(calls.map((c) => [c.tool, c.status, c.attempts])).toEqual([
      ['world.read', 'succeeded', 1],
      ['world.unsafe', 'succeeded', 1],
    ]);
  });

  it('commits the final answer to the session only when the run succeeds', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const world = createWorld(effects);
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner((request) =>
        request.input === 'fail please'
          ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'x' } }] }
          : { type: 'final', answer: `answer to ${request.input}` },
      ),
      tools: world.all(),
    });
    const ok = await runtime.wait((await runtime.start({ input: 'hello', sessionId: 'ses_1' })).id);
    expect(ok.status).toBe('succeeded');
    const rows = await rowsOf(runtime, database, dialect);
    expect((await rows.listMessages(scopeKey(null, 'ses_1'))).map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'answer to hello'],
    ]);

    const failed = await runtime.wait(
      (await runtime.start({ input: 'fail please', sessionId: 'ses_1', options: { maxSteps: 2 } })).id,
    );
    expect(failed.status).toBe('failed');
    expect(failed.stopReason).toBe('max_steps');
    expect(failed.answer).toBeNull();
    expect(await rows.listMessages(scopeKey(null, 'ses_1'))).toHaveLength(2);
  });

  it('shows the planner the session history and the tool observations', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const seen: string[][] = [];
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner((request) => {
        seen.push(request.messages.map((m) => `${m.role}:${m.content}`));
        return request.stepIndex === 0
          ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: request.input } }] }
          : { type: 'final', answer: `ok ${request.input}` };
      }),
      tools: createWorld(effects).all(),
    });
    await runtime.wait((await runtime.start({ input: 'first', sessionId: 's' })).id);
    await runtime.wait((await runtime.start({ input: 'second', sessionId: 's' })).id);
    expect(seen.at(-1)).toEqual([
      'user:first',
      'assistant:ok first',
      'user:second',
      'assistant:',
      'tool:{"value":"second","replayed":false}',
    ]);
  });

  it('rejects a malformed start request with a typed error and writes nothing', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner([]),
      tools: createWorld(effects).all(),
    });
    await expect(runtime.start({ input: '' })).rejects.toMatchObject({ code: 'input.invalid' });
    await expect(runtime.start({ input: 'x', options: { budget: { maxTokens: -1 } } })).rejects.toMatchObject({
      code: 'input.invalid',
    });
    expect((await runtime.list()).runs).toHaveLength(0);
    await expect(runtime.get('run_missing')).rejects.toThrow(expect.objectContaining({ code: 'run.not_found' }));
    // A caller that lost its run id (JavaScript, or `as any`) is told so, not given a store error.
    await expect(runtime.get(undefined as unknown as string)).rejects.toMatchObject({ code: 'input.invalid' });
  });

  it('refuses a runtime without its tools with a typed error', () => {
    expect(() =>
      createRuntime({ database: ':memory:', planner: createScriptedPlanner([]) } as unknown as RuntimeOptions),
    ).toThrow(expect.objectContaining({ code: 'input.invalid', message: expect.stringMatching(/needs 'tools'/) }));
  });
});
