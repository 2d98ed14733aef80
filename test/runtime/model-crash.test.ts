/**
 * Crashes around a real model call: a child process drives the run against the parent's fake
 * Chat Completions server and is SIGKILLed; the parent resumes the run from the file.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIPlanner } from '../../src/index.js';
import { startFakeOpenAI, textReply, toolCallsReply, type FakeOpenAI } from '../helpers/fake-openai.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { scopeKey } from '../../src/runtime/model/tenant-keys.js';
import { storeOf } from '../../src/runtime/internals.js';
import { scaled } from '../helpers/limits.js';

const CHILD = fileURLToPath(new URL('../helpers/model-child.ts', import.meta.url));

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
});

function spawnChild(args: object, failpoints = '') {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(args)], {
    env: { ...process.env, BATON_FAILPOINTS: failpoints },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    proc.on('exit', (_code, signal) => resolve({ signal, stderr })),
  );
  return { proc, exited };
}

function reopen(db: string, effects: string) {
  return openRuntime({
    database: db,
    planner: createOpenAIPlanner({
      model: 'fake-model',
      baseURL: server.baseURL,
      apiKey: 'test',
      instructions: 'Test.',
    }),
    tools: createWorld(effects).all(),
  });
}

describe('crashes around a model call', () => {
  /**
   * Runs a child whose model answers one tool step then a final answer, killed at `point`;
   * resumes it here (`askedAgain`: the step is expected to be asked again, and answered the same).
   */
  async function crashAndResume(tool: string, point: string, { askedAgain = false } = {}) {
    const { db, effects } = tempFiles();
    const call = () => toolCallsReply([{ name: tool, arguments: { value: 'once' } }]);
    // The replies in the order they are asked for: the model answers a step asked again the same.
    server.enqueue(call(), ...(askedAgain ? [call()] : []), textReply('done'));
    const child = spawnChild({ db, effects, baseURL: server.baseURL }, `${point}=kill`);
    const { signal, stderr } = await child.exited;
    expect(signal, stderr).toBe('SIGKILL');
    expect(server.requests).toHaveLength(1);
    const runtime = reopen(db, effects);
    const [listed] = (await runtime.list()).runs;
    const run = await runtime.wait(listed!.id);
    expect(run).toMatchObject({ status: 'succeeded', answer: 'done' });
    return { effects: readEffects(effects), steps: await runtime.steps(run.id) };
  }

  it("never asks the model again for a step whose call began: its answer commits with the call's started row", async () => {
    const { effects } = await crashAndResume('world__idempotent', 'tool.started');
    // Step 0 was answered once (before the crash), step 1 once (after): no second call for step 0.
    expect(server.requests).toHaveLength(2);
    expect(effects).toHaveLength(1);
  });

  it('asks again for a step nothing was done with: killed between the answer and its commit, no effect began', async () => {
    const { effects, steps } = await crashAndResume('world__idempotent', 'planner.answered', { askedAgain: true });
    // Step 0 asked twice (its first answer was never committed, and nothing acted on it), step 1 once.
    expect(server.requests).toHaveLength(3);
    expect(effects).toHaveLength(1);
    expect(steps.map((step) => step.stepIndex)).toEqual([0, 1]);
  });

  it('commits the answer to a step of read calls on its own: killed after it, the model is not asked again', async () => {
    const { steps } = await crashAndResume('world__read', 'planner.journaled');
    expect(server.requests).toHaveLength(2);
    expect(steps.map((step) => step.stepIndex)).toEqual([0, 1]);
  });

  it('leaves no partial answer when the process is killed mid-stream, and the resumed run completes', async () => {
    const { db, effects } = tempFiles();
    server.enqueue(
      textReply('A long answer, streamed slowly and never finished', undefined, {
        chunkSize: 4,
        pause: { after: 3, ms: 10_000 },
      }),
    );
    const child = spawnChild({ db, effects, baseURL: server.baseURL });
    // Kill once the child holds part of the answer: the stream has reached its pause. A busy
    // machine takes longer to get there, so the wait is on that condition, generously bounded.
    await expect.poll(() => server.paused, { timeout: scaled(60_000), interval: 10 }).toBe(1);
    expect(server.requests).toHaveLength(1);
    child.proc.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    server.enqueue(textReply('The finished answer.'));
    const runtime = reopen(db, effects);
    const [listed] = (await runtime.list()).runs;
    expect(await storeOf(runtime).listMessages(scopeKey(null, listed!.sessionId))).toEqual([]);
    const run = await runtime.wait(listed!.id);
    expect(run).toMatchObject({ status: 'succeeded', answer: 'The finished answer.' });
    expect((await storeOf(runtime).listMessages(scopeKey(null, listed!.sessionId))).map((m) => m.content)).toEqual([
      'crash while the model answers',
      'The finished answer.',
    ]);
    expect(server.requests).toHaveLength(2);
  });
});
