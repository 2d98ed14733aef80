import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';

describe('the terminal rule on every path in', () => {
  it('refuses a done sent from outside while an unsafe call runs, and the run finishes on its own', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const charge = defineTool({
      name: 'card.charge',
      description: 'Charges a card',
      input: z.object({ cents: z.number() }),
      effect: 'unsafe',
      risk: 'low',
      execute: async () => {
        started = true;
        await released;
        return { charged: true };
      },
    });
    const runtime = openRuntime({
      database: tempFiles().db,
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'card.charge', args: { cents: 500 } }] },
        { type: 'final', answer: 'charged' },
      ]),
      tools: [charge],
    });
    const run = await runtime.start({ input: 'charge it' });
    await waitUntil(() => started, 'the charge to start');
    await expect(runtime.send(run.id, { type: 'done' })).rejects.toMatchObject({
      code: 'run.invalid_transition',
      failure: { details: { reason: `tool call ${run.id}.s0.c0 is started` } },
    });
    expect((await runtime.get(run.id)).status).toBe('executing');
    release();
    expect(await runtime.wait(run.id)).toMatchObject({ status: 'succeeded', answer: 'charged' });
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({ status: 'succeeded' });
  });

  it('answers run.not_found for the approvals of a run that does not exist, and refuses a list limit out of range', async () => {
    const runtime = openRuntime({ database: tempFiles().db, planner: createScriptedPlanner([]), tools: [] });
    await expect(runtime.approvals('run_missing')).rejects.toMatchObject({ code: 'run.not_found' });
    for (const limit of [-1, 0, 1.5, 1_001, Number.NaN]) {
      await expect(runtime.list({ limit })).rejects.toMatchObject({ code: 'input.invalid' });
    }
    expect(await runtime.list({ limit: 1_000 })).toEqual({ runs: [], nextCursor: null });
  });
});
