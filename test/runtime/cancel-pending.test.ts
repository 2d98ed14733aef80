import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';

describe('a cancel that loads the run', () => {
  it('leaves no call open in the cancelled run, whichever effect class its first call has', async () => {
    for (const effect of ['read', 'idempotent', 'unsafe'] as const) {
      const { db, effects } = tempFiles();
      const world = createWorld(effects);
      const options: RuntimeOptions = {
        database: db,
        planner: createScriptedPlanner([
          { type: 'tool_calls', calls: [{ tool: `world.${effect}`, args: { value: 'x' } }] },
          { type: 'final', answer: 'done' },
        ]),
        tools: [world[effect]],
        recover: false,
      };
      // Recorded for a worker, then cancelled by a runtime that loads it (and so starts it).
      const api = openRuntime({ ...options, drive: false });
      const run = await api.start({ input: 'go' });
      const runtime = openRuntime(options);
      const cancelled = await runtime.cancel(run.id, { reason: 'not now' });
      expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
      const open = (await runtime.toolCalls(run.id)).filter((c) => c.status === 'started');
      expect(open, effect).toEqual([]);
      await api.close();
      await runtime.close();
      expect(readEffects(effects).length).toBeLessThanOrEqual(1);
    }
  });
});
