/**
 * A Baton run as a child actor of a service's own machine: the parent "order fulfilment"
 * machine invokes a run that waits for approval; its process is SIGKILLed, the parent is
 * restored from its persisted snapshot in another process, the approval is given, and the
 * parent reaches its next state with the run's answer, once, with one run in the database.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import { fromBatonRun, type BatonRunEvent, type BatonRunOutput } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { createServerAgent } from '../helpers/server-agent.js';
import { spawnChild, spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

const CHILD = fileURLToPath(new URL('../helpers/order-child.ts', import.meta.url));

/** Starts the first order process and resolves with the run id once its run waits; then kills it. */
async function firstUntilWaiting(args: string): Promise<{ runId: string; kill: () => Promise<NodeJS.Signals | null> }> {
  const child = await spawnUntilJsonLine<{ waiting: string }>(CHILD, [args]);
  return { runId: child.first.waiting, kill: child.kill };
}

describe('fromBatonRun', () => {
  it(
    're-attaches a restored parent to the same run after a SIGKILL, and delivers the outcome once',
    { timeout: scaled(120_000) },
    async () => {
      const files = tempFiles();
      const args = { db: files.db, effects: files.effects, snapshot: join(files.dir, 'order.json') };
      const first = await firstUntilWaiting(JSON.stringify({ ...args, mode: 'first' }));
      expect(await first.kill()).toBe('SIGKILL');

      const restored = await spawnChild(CHILD, [JSON.stringify({ ...args, mode: 'restore' })], {
        timeoutMs: scaled(60_000),
      });
      expect(restored.code, restored.stderr).toBe(0);
      const report = JSON.parse(restored.stdout.trim().split('\n').at(-1)!) as {
        state: string;
        context: { runId: string; answer: string; outcomes: number; events: number };
        runs: string[];
      };
      expect(report.state).toBe('shipped');
      expect(report.context).toMatchObject({
        runId: first.runId,
        answer: 'mail: {"sent":"ops@example.com"}',
        outcomes: 1,
      });
      // One run in the database, and its one effect: the restore re-attached, it did not start again.
      expect(report.runs).toEqual([first.runId]);
      expect(readEffects(files.effects)).toHaveLength(1);
    },
  );

  it('sends the run’s events to the parent and ends with an error when the run fails', async () => {
    const { db, effects } = tempFiles();
    const agent = createServerAgent(effects);
    const runtime = openRuntime({ database: db, planner: agent.planner, tools: agent.tools });
    const seen: string[] = [];
    const parent = setup({
      types: { events: {} as BatonRunEvent },
      actors: { run: fromBatonRun(runtime) },
    }).createMachine({
      initial: 'working',
      states: {
        working: {
          invoke: {
            src: 'run',
            input: { idempotencyKey: 'k-1', request: { input: 'mail' } },
            onDone: 'done',
            onError: 'held',
          },
          on: {
            'baton.event': {
              actions: ({ event }) => void seen.push(event.event.type),
            },
          },
        },
        done: { type: 'final' },
        held: { type: 'final' },
      },
    });
    const actor = createActor(parent).start();
    await expect
      .poll(async () => (await runtime.list()).runs[0]?.status, { timeout: scaled(20_000) })
      .toBe('waiting_human');
    const runId = (await runtime.list()).runs[0]!.id;
    await runtime.reject(runId, (await runtime.get(runId)).pendingApprovalId!, { by: 'ops', terminate: true });
    await expect.poll(() => actor.getSnapshot().value, { timeout: scaled(20_000) }).toBe('held');
    expect(seen[0]).toBe('run.created');
    expect(seen).toContain('approval_request');
    expect(seen.at(-1)).toBe('state');
    const output = actor.getSnapshot().output as BatonRunOutput | undefined;
    expect(output).toBeUndefined();
  });
});
