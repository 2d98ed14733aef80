import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';

describe('checkpoint failures', () => {
  it('starts no new side effect once a snapshot write loses its compare-and-set', async () => {
    const { db } = tempFiles();
    const effects: string[] = [];
    const intruder = new SQLite(db);
    const send = defineTool({
      name: 'send',
      description: 'sends, and lets another writer bump the run version meanwhile',
      input: z.object({ n: z.number() }),
      effect: 'unsafe',
      risk: 'low',
      execute: ({ n }, ctx) => {
        effects.push(`send ${n}`);
        if (n === 1) intruder.prepare('update runs set version = version + 100 where id = ?').run(ctx.runId);
        return 'sent';
      },
    });
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'send', args: { n: 1 } }] },
        { type: 'tool_calls', calls: [{ tool: 'send', args: { n: 2 } }] },
        { type: 'final', answer: 'ok' },
      ]),
      tools: [send],
    });
    const run = await runtime.start({ input: 'x' });
    // The write after the first send loses its compare-and-set: the runtime lets the run go.
    await waitUntil(() => effects.length > 0 && runtime.stats().liveRuns === 0, 'the run to be let go');
    expect(effects).toEqual(['send 1']);
    expect((await runtime.get(run.id)).status).toBe('executing');
    // The durable state wins: the run is reloaded from the file before anything else is done to it.
    expect(await runtime.cancel(run.id)).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    expect(effects).toEqual(['send 1']);
    intruder.close();
  });
});
