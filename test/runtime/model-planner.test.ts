/**
 * The OpenAI-compatible planner inside the runtime, against a real Chat Completions server on
 * loopback: where each failure goes (observation, retry, stop reason), drafts, budgets, cancel.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIPlanner, type RunEventRecord, type RuntimeOptions } from '../../src/index.js';
import {
  contextLengthExceeded,
  delayed,
  emptyReply,
  errorReply,
  rateLimited,
  refusalReply,
  startFakeOpenAI,
  textReply,
  toolCallsReply,
  type FakeOpenAI,
} from '../helpers/fake-openai.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { scopeKey } from '../../src/runtime/model/tenant-keys.js';
import { storeOf } from '../../src/runtime/internals.js';
import { waitUntil } from '../helpers/wait-until.js';

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
});

function options(extra: Partial<Parameters<typeof createOpenAIPlanner>[0]> = {}): RuntimeOptions & { effects: string } {
  const { db, effects } = tempFiles();
  return {
    database: db,
    effects,
    planner: createOpenAIPlanner({
      model: 'fake-model',
      baseURL: server.baseURL,
      apiKey: 'test',
      instructions: 'You help with tests.',
      retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 50 },
      timeoutMs: 2_000,
      ...extra,
    }),
    tools: createWorld(effects).all(),
  };
}

const call = (tool: string, args: Record<string, unknown> | string) => ({
  name: tool.replaceAll('.', '__'),
  arguments: args,
});

/** The tool messages of the n-th request the server received. */
function toolMessages(n: number): string[] {
  const messages = server.requests[n]!.body.messages as { role: string; content: string }[];
  return messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

describe('runtime with the OpenAI-compatible planner', () => {
  it('streams drafts live and commits only the final answer to the session', async () => {
    const opts = options();
    server.enqueue(
      toolCallsReply([call('world.read', { value: 'a' })]),
      textReply('The answer is forty-two.', undefined, { chunkSize: 4 }),
    );
    const runtime = openRuntime(opts);
    const run = await runtime.start({ input: 'what is it?', sessionId: 's' });
    const live: RunEventRecord[] = [];
    for await (const event of runtime.events(run.id)) live.push(event);
    const drafts = live.filter((e) => e.type === 'draft');
    expect(drafts.map((d) => d.data.text).join('')).toBe('The answer is forty-two.');
    expect(drafts.length).toBeGreaterThan(3);
    const done = await runtime.get(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'The answer is forty-two.' });
    // Drafts are never rows: the log holds only committed events, numbered without gaps.
    const stored = await storeOf(runtime).listEvents(run.id);
    expect(stored.some((e) => e.type === 'draft')).toBe(false);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect((await storeOf(runtime).listMessages(scopeKey(null, 's'))).map((m) => m.content)).toEqual([
      'what is it?',
      'The answer is forty-two.',
    ]);
    expect(done.usage).toMatchObject({ llmCalls: 2, tokens: 30 });
    // The tool output reached the model as an observation.
    expect(toolMessages(1)).toEqual(['{"value":"a","replayed":false}']);
  });

  it('leaves no partial answer when a stream breaks mid-answer, and the retry completes', async () => {
    const opts = options();
    server.enqueue(
      textReply('A partial answer that never ends', undefined, { chunkSize: 3, cutAfter: 4 }),
      textReply('The whole answer.'),
    );
    const runtime = openRuntime(opts);
    const run = await runtime.start({ input: 'x', sessionId: 's' });
    const drafts: RunEventRecord[] = [];
    for await (const event of runtime.events(run.id)) if (event.type === 'draft') drafts.push(event);
    expect(await runtime.get(run.id)).toMatchObject({ status: 'succeeded', answer: 'The whole answer.' });
    expect((await storeOf(runtime).listMessages(scopeKey(null, 's'))).map((m) => m.content)).toEqual([
      'x',
      'The whole answer.',
    ]);
    expect(server.requests).toHaveLength(2);
    // Each draft says which attempt it belongs to, so a reader can drop the broken one.
    expect(new Set(drafts.map((d) => d.data.attempt))).toEqual(new Set([1, 2]));
    expect((await runtime.steps(run.id))[0]!.context).toMatchObject({ attempts: 2 });
  });

  it.each([
    ['an empty reply twice', [emptyReply(), emptyReply()], 'planner.empty_response', 2],
    ['a refusal', [refusalReply('I will not do that.')], 'planner.refused', 1],
    ['server errors past the retries', [errorReply(500), errorReply(502), errorReply(503)], 'planner.unavailable', 3],
    ['another client error', [errorReply(401, 'bad key', { type: 'invalid_request_error' })], 'planner.failed', 1],
  ])('ends the run failed on %s, with the code the user sees', async (_name, replies, code, requests) => {
    const opts = options();
    server.enqueue(...replies);
    const runtime = openRuntime(opts);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'error', failure: { code } });
    expect(run.failure!.message.length).toBeGreaterThan(0);
    if (code === 'planner.refused') expect(run.failure!.message).toContain('I will not do that.');
    expect(server.requests).toHaveLength(requests);
    expect(run.answer).toBeNull();
  });

  it('retries after a 429 as Retry-After says, and the run goes on', async () => {
    const opts = options();
    server.enqueue(rateLimited(0), textReply('ok'));
    const runtime = openRuntime(opts);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run).toMatchObject({ status: 'succeeded', answer: 'ok' });
    expect(server.requests).toHaveLength(2);
  });

  it('compacts the context after a context-length error, retries once, and reports it on the step', async () => {
    const opts = options();
    server.enqueue(
      toolCallsReply([call('world.read', { value: 'x'.repeat(2_000) })]),
      contextLengthExceeded(),
      textReply('fits now'),
    );
    const runtime = openRuntime(opts);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run).toMatchObject({ status: 'succeeded', answer: 'fits now' });
    const step = (await runtime.steps(run.id))[1]!;
    expect(step.context!.notes.join(' ')).toMatch(/context length exceeded: replaced/i);
    expect(toolMessages(2)[0]!.length).toBeLessThan(toolMessages(1)[0]!.length);
  });

  it('shows the model malformed tool-call JSON and unknown tools as observations', async () => {
    const opts = options();
    server.enqueue(toolCallsReply([call('world.read', '{"value": "a"'), call('no.such', {})]), textReply('understood'));
    const runtime = openRuntime(opts);
    const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
    expect(run.status).toBe('succeeded');
    const [badJson, unknown] = toolMessages(1);
    expect(badJson).toContain('tool.invalid_arguments');
    expect(badJson).toContain('not valid JSON');
    expect(unknown).toContain("Unknown tool 'no.such'");
    expect(readEffects(opts.effects)).toEqual([]);
  });

  it('stops before a call whose estimate would pass maxTokens, never overshooting', async () => {
    const opts = options({ maxCompletionTokens: 100 });
    for (let i = 0; i < 20; i += 1) server.enqueue(toolCallsReply([call('world.read', { value: `v${i}` })]));
    const runtime = openRuntime(opts);
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget: { maxTokens: 600 } } })).id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    expect(run.failure!.message).toContain('max_tokens');
    expect(run.usage.tokens).toBeLessThanOrEqual(600);
    expect(server.requests).toHaveLength(run.usage.llmCalls);
    expect(run.usage.llmCalls).toBeGreaterThan(1);
  });

  it('stops before a call that could pass maxCostUsd, with prices from configuration', async () => {
    const opts = options({ maxCompletionTokens: 100, prices: { inputPerMTok: 1_000, outputPerMTok: 2_000 } });
    for (let i = 0; i < 20; i += 1) server.enqueue(toolCallsReply([call('world.read', { value: `v${i}` })]));
    const runtime = openRuntime(opts);
    const run = await runtime.wait((await runtime.start({ input: 'x', options: { budget: { maxCostUsd: 0.5 } } })).id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    expect(run.failure!.message).toContain('max_cost_usd');
    expect(run.usage.costUsd).toBeGreaterThan(0);
    expect(run.usage.costUsd).toBeLessThanOrEqual(0.5);
    expect((await runtime.steps(run.id))[0]!.usage.costUsd).toBeCloseTo(10 * 0.001 + 5 * 0.002, 6);
  });

  it('aborts the HTTP request when the run is cancelled', async () => {
    const opts = options();
    server.enqueue(delayed(5_000, textReply('too late')));
    const runtime = openRuntime(opts);
    const started = await runtime.start({ input: 'x' });
    await waitUntil(() => server.requests.length > 0, 'the model request');
    const run = await runtime.cancel(started.id);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    await server.requests[0]!.settled;
    expect(server.requests[0]!.aborted).toBe(true);
    expect(server.requests).toHaveLength(1);
  });
});
