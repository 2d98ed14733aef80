import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createScriptedPlanner,
  defineTool,
  ToolFailedError,
  ToolUnavailableError,
  type AnyTool,
  type PlannerRequest,
} from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { storeOf } from '../../src/runtime/internals.js';

/** Runs one call of `tool` and returns what the model observed and the ledger row. */
async function observe(tool: AnyTool, args: unknown = {}) {
  const { db } = tempFiles();
  let observed: PlannerRequest | undefined;
  const runtime = openRuntime({
    database: db,
    planner: createScriptedPlanner((request) => {
      if (request.stepIndex === 0) return { type: 'tool_calls', calls: [{ tool: tool.name, args }] };
      observed = request;
      return { type: 'final', answer: 'ok' };
    }),
    tools: [tool],
  });
  const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
  expect(run.status).toBe('succeeded');
  const row = (await storeOf(runtime).listToolCalls(run.id))[0]!;
  return { observation: observed!.messages.at(-1)!.content, row, runtime, run };
}

const base = { description: 'test tool', input: z.object({}), effect: 'read', risk: 'low' } as const;

describe('tool calls', () => {
  it('stores an output over maxOutputBytes as an artifact and shows the model a truncated preview', async () => {
    const big = 'x'.repeat(5000);
    const { observation, row, runtime } = await observe(
      defineTool({ ...base, name: 'big', maxOutputBytes: 1000, execute: () => big }),
    );
    const sha256 = createHash('sha256').update(big).digest('hex');
    const result = JSON.parse(row.result!);
    expect(result).toMatchObject({ status: 'ok', truncated: true, artifact: { sha256, size: 5000 } });
    expect((result.content as string).length).toBe(1000);
    expect(observation).toContain(`artifact sha256:${sha256}`);
    expect((await storeOf(runtime).getArtifact(sha256))!.content.toString()).toBe(big);
  });

  it('times a tool out, aborts it, and tells the model it may retry', async () => {
    let aborted = false;
    const { observation, row } = await observe(
      defineTool({
        ...base,
        name: 'sleepy',
        timeoutMs: 50,
        execute: (_input, ctx) =>
          new Promise((resolve) => {
            ctx.signal.addEventListener('abort', () => (aborted = true));
            setTimeout(resolve, 5000).unref();
          }),
      }),
    );
    expect(aborted).toBe(true);
    expect(row.status).toBe('failed');
    expect(observation).toContain("tool.timed_out: Tool 'sleepy' timed out after 50 ms");
    expect(observation).toContain('may succeed if retried');
  });

  it('retries a transiently unavailable tool with backoff, a bounded number of times', async () => {
    let calls = 0;
    const flaky = await observe(
      defineTool({
        ...base,
        name: 'flaky',
        execute: () => {
          calls += 1;
          if (calls < 3) throw new ToolUnavailableError('503');
          return 'finally';
        },
      }),
    );
    expect(calls).toBe(3);
    expect(flaky.observation).toBe('finally');

    let downCalls = 0;
    const down = await observe(
      defineTool({
        ...base,
        name: 'down',
        execute: () => {
          downCalls += 1;
          throw new ToolUnavailableError('503');
        },
      }),
    );
    expect(downCalls).toBe(3);
    expect(down.observation).toContain('tool.unavailable');
  });

  it('never retries an unsafe tool on its own', async () => {
    let calls = 0;
    const { observation } = await observe(
      defineTool({
        ...base,
        effect: 'unsafe',
        name: 'mailer',
        execute: () => {
          calls += 1;
          throw new ToolUnavailableError('smtp down');
        },
      }),
    );
    expect(calls).toBe(1);
    expect(observation).toContain('tool.unavailable');
  });

  it('reports a tool failure to the model with its retryable flag', async () => {
    const { observation, row } = await observe(
      defineTool({
        ...base,
        name: 'broken',
        execute: () => {
          throw new ToolFailedError('disk full', { retryable: false });
        },
      }),
    );
    expect(row.status).toBe('failed');
    expect(observation).toBe("Error tool.failed: Tool 'broken' failed: disk full");
  });

  it('checks outputs against the output schema', async () => {
    const { observation } = await observe(
      defineTool({
        ...base,
        name: 'typed',
        output: z.object({ n: z.number() }),
        execute: () => ({ n: 'not a number' }) as unknown as { n: number },
      }),
    );
    expect(observation).toContain('does not match its schema');
  });

  it('gives the tool a stable idempotency key, the run context and its attempt number', async () => {
    const seen: unknown[] = [];
    const { run } = await observe(
      defineTool({
        ...base,
        name: 'ctx',
        execute: (_input, ctx) => {
          seen.push({ key: ctx.idempotencyKey, id: ctx.toolCallId, attempt: ctx.attempt, run: ctx.runId });
          return 'ok';
        },
      }),
    );
    expect(seen).toEqual([{ key: `${run.id}.s0.c0`, id: `${run.id}.s0.c0`, attempt: 1, run: run.id }]);
  });

  it('refuses a malformed tool definition', () => {
    expect(() => defineTool({ ...base, name: 'has space', execute: () => 1 })).toThrow(/must match/);
    expect(() => defineTool({ ...base, effect: 'reconcilable', name: 'r', execute: () => 1 })).toThrow(/reconcile/);
  });
});
