import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { scaled } from '../helpers/limits.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { baton } from './cli-child.js';

describe('baton and a run of another agent', () => {
  it('refuses to decide or cancel it with the demo agent, says which agent it needs, and changes nothing', async () => {
    const { db, effects, dir } = tempFiles();
    const support = openRuntime({
      database: db,
      agent: 'support',
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'refund' } }] },
        { type: 'final', answer: 'done' },
      ]),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
      recover: false,
    });
    const run = await support.wait((await support.start({ input: 'refund' })).id);
    expect(run.status).toBe('waiting_human');
    await support.close();
    for (const command of [
      ['approve', run.id],
      ['cancel', run.id],
    ]) {
      const outcome = await baton([...command, '--db', db, '--dir', join(dir, 'configs')], {
        timeoutMs: scaled(60_000),
      });
      expect(outcome.code, outcome.stderr).toBe(1);
      expect(outcome.stderr).toContain("belongs to agent 'support'");
      expect(outcome.stderr).toContain(
        "(run.agent_mismatch)\nPass --agent <the module of agent 'support', or of an agent that calls it as a tool>",
      );
    }
    const again = openRuntime({
      database: db,
      agent: 'support',
      planner: createScriptedPlanner([]),
      tools: [],
      recover: false,
    });
    expect(await again.get(run.id)).toMatchObject({ status: 'waiting_human' });
    expect((await again.approvals(run.id))[0]).toMatchObject({ status: 'pending' });
    expect(readEffects(effects)).toEqual([]);
  });
});
