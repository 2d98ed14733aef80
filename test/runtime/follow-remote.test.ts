/**
 * Following a run another process drives, read from its log: when the run ends between the
 * follower's read of the log (nothing new) and its read of the run (now ended), the events that
 * ended it are still delivered — the transaction that ended the run wrote them too. The
 * interleaving is forced: the second store handle lets the run end just before it reads the run.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { createEventHub } from '../../src/runtime/model/event-hub.js';
import { followEvents } from '../../src/runtime/read/follow.js';
import { createSqliteStore, type Store } from '../../src/store/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';

describe('following a run driven elsewhere', () => {
  it('delivers the events that ended the run when it ends between reading the log and reading the run', async () => {
    const database = join(tempDir(), 'baton.db');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const driver = openRuntime({
      database,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'echo', args: { text: 'hi' } }] },
        { type: 'final', answer: 'done' },
      ]),
      tools: [
        defineTool({
          name: 'echo',
          description: 'Echo',
          input: z.object({ text: z.string() }),
          effect: 'read',
          risk: 'low',
          execute: ({ text }) => text,
        }),
      ],
      // The last planning step waits until the follower is between its two reads.
      hooks: { beforeActor: ({ actor, stepIndex }) => (actor === 'planner' && stepIndex === 1 ? held : undefined) },
    });
    const run = await driver.start({ input: 'x' });
    await waitUntil(async () => (await driver.get(run.id)).usage.steps === 1, 'the first step');

    const own = createSqliteStore(database);
    let reads = 0;
    // The real store, with one interleaving: before its second read of the run (the first is the
    // existence check), the run is let go and allowed to end.
    const store = new Proxy(own, {
      get(target, key, receiver) {
        if (key !== 'getRun') return Reflect.get(target, key, receiver) as unknown;
        return async (id: string) => {
          reads += 1;
          if (reads === 2) {
            release();
            await waitUntil(async () => (await driver.get(run.id)).status === 'succeeded', 'the run to end');
          }
          return target.getRun(id);
        };
      },
    }) as Store;
    const seen = [];
    for await (const event of followEvents(
      { store, hub: createEventHub(), liveStatus: () => undefined, isClosed: () => false, onClose: new Set() },
      run.id,
      {},
    )) {
      seen.push(event);
    }
    await own.close();
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen.at(-1)).toMatchObject({ type: 'state', data: { to: 'succeeded' } });
  });
});
