import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonError, type FailureCode } from '../../src/failure.js';
import { createOpenAIPlanner, type OpenAIPlannerOptions, type PlannerRequest } from '../../src/planner/index.js';
import {
  contextLengthExceeded,
  delayed,
  emptyReply,
  errorReply,
  flatErrorReply,
  rateLimited,
  refusalReply,
  startFakeOpenAI,
  textReply,
  toolCallsReply,
  type FakeOpenAI,
} from '../helpers/fake-openai.js';

let server: FakeOpenAI;

beforeEach(async () => {
  server = await startFakeOpenAI();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

function plannerFor(options: Partial<OpenAIPlannerOptions> = {}) {
  return createOpenAIPlanner({
    model: 'fake-model',
    instructions: 'Be brief.',
    baseURL: server.baseURL,
    apiKey: 'sk-test',
    retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 2_000 },
    timeoutMs: 2_000,
    ...options,
  });
}

function request(overrides: Partial<PlannerRequest> = {}): PlannerRequest {
  return {
    runId: 'run_abc',
    stepIndex: 0,
    input: 'What is in a.txt?',
    messages: [{ role: 'user', content: 'What is in a.txt?' }],
    tools: [],
    context: {},
    signal: new AbortController().signal,
    ...overrides,
  };
}

const readTool = {
  name: 'fs.read',
  description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

async function failureOf(promise: Promise<unknown>): Promise<BatonError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BatonError);
  return error as BatonError;
}

function expectCode(error: BatonError, code: FailureCode): void {
  expect(error.code, error.message).toBe(code);
}

type BodyMessage = { role: string; content?: string | null; tool_call_id?: string; tool_calls?: unknown[] };
const messagesOf = (i: number) => server.requests[i]!.body.messages as BodyMessage[];

describe('createOpenAIPlanner', () => {
  it('returns a final answer from a JSON completion', async () => {
    server.enqueue(textReply('It says hello.'));
    const response = await plannerFor({ stream: false }).next(request());
    expect(response.decision).toEqual({ type: 'final', answer: 'It says hello.' });
    expect(response.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(response.attempts).toBe(1);
    const body = server.requests[0]!.body;
    expect(body).toMatchObject({ model: 'fake-model', max_completion_tokens: 4096 });
    expect(body.stream).toBe(false);
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is in a.txt?' },
    ]);
  });

  it('streams a final answer, forwarding each content delta as a draft in order', async () => {
    server.enqueue(textReply('The file says hello world.', { prompt_tokens: 12, completion_tokens: 7 }));
    const drafts: string[] = [];
    const response = await plannerFor().next(request({ onDraft: (text) => drafts.push(text) }));
    expect(response.decision).toEqual({ type: 'final', answer: 'The file says hello world.' });
    expect(drafts.length).toBeGreaterThan(3);
    expect(drafts.join('')).toBe('The file says hello world.');
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 7 });
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('gathers a tool call whose arguments are split across chunks, with its text', async () => {
    server.enqueue(
      toolCallsReply([{ name: 'lookup', arguments: { query: 'weather in Paris', limit: 3 } }], {
        content: 'Let me check.',
        chunkSize: 3,
      }),
    );
    const tools = [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' } }];
    const response = await plannerFor().next(request({ tools }));
    expect(response.decision).toEqual({
      type: 'tool_calls',
      calls: [{ tool: 'lookup', args: { query: 'weather in Paris', limit: 3 } }],
      text: 'Let me check.',
    });
  });

  it('accepts parallel tool calls, in order, and offers the tools with parallel calls on', async () => {
    server.enqueue(
      toolCallsReply([
        { name: 'fs__read', arguments: { path: 'a.txt' } },
        { name: 'fs__read', arguments: { path: 'b.txt' } },
      ]),
    );
    const response = await plannerFor().next(request({ tools: [readTool] }));
    expect(response.decision).toEqual({
      type: 'tool_calls',
      calls: [
        { tool: 'fs.read', args: { path: 'a.txt' } },
        { tool: 'fs.read', args: { path: 'b.txt' } },
      ],
    });
    expect(server.requests[0]!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'fs__read', description: 'Reads a file' } }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
  });

  it('sends dotted tool names and runtime call ids in a valid form, consistently', async () => {
    server.enqueue(textReply('a.txt says hello.'));
    const messages: PlannerRequest['messages'] = [
      { role: 'user', content: 'What is in a.txt?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'run_abc.s0.c0', tool: 'fs.read', args: { path: 'a.txt' } }],
      },
      { role: 'tool', toolCallId: 'run_abc.s0.c0', tool: 'fs.read', content: 'hello' },
    ];
    await plannerFor().next(request({ stepIndex: 1, messages, tools: [readTool] }));
    const sent = messagesOf(0);
    expect(sent[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 's0_c0', type: 'function', function: { name: 'fs__read', arguments: '{"path":"a.txt"}' } }],
    });
    expect(sent[3]).toEqual({ role: 'tool', tool_call_id: 's0_c0', content: 'hello' });
  });

  it('passes malformed tool-call JSON through as the raw string with an argsError', async () => {
    server.enqueue(toolCallsReply([{ name: 'fs__read', arguments: '{"path": "a.txt"' }]));
    const response = await plannerFor().next(request({ tools: [readTool] }));
    expect(response.decision.type).toBe('tool_calls');
    const call = response.decision.type === 'tool_calls' ? response.decision.calls[0] : undefined;
    expect(call).toMatchObject({ tool: 'fs.read', args: '{"path": "a.txt"' });
    expect(call?.argsError).toMatch(/not valid JSON/);
  });

  it('retries an empty reply once with a note, and answers if the retry does', async () => {
    server.enqueue(emptyReply(), textReply('Now I answer.'));
    const response = await plannerFor().next(request());
    expect(response.decision).toEqual({ type: 'final', answer: 'Now I answer.' });
    expect(response.attempts).toBe(2);
  });

  it('fails with planner.empty_response after an empty reply and an empty retry', async () => {
    server.enqueue(emptyReply(), emptyReply());
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.empty_response');
    expect(server.requests).toHaveLength(2);
    expect(messagesOf(0)).toHaveLength(2);
    const retried = messagesOf(1);
    expect(retried).toHaveLength(3);
    expect(retried[2]).toMatchObject({ role: 'user', content: expect.stringMatching(/previous reply was empty/) });
    expect(error.failure.details).toMatchObject({ attempts: 2, usage: { inputTokens: 20, outputTokens: 10 } });
  });

  it('says after two empty replies that the context is the likely cause, with the prompt size', async () => {
    server.enqueue(emptyReply(), emptyReply());
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.empty_response');
    expect(error.message).toMatch(/replied with nothing twice at step 0 of run 'run_abc'/);
    expect(error.message).toMatch(/likely cause is a prompt of ~\d+ tokens that does not fit the model's context/);
  });

  it('waits as long as a 429 says in retry-after, then succeeds', async () => {
    server.enqueue(rateLimited(1), textReply('Done.'));
    const response = await plannerFor().next(request());
    expect(response.decision).toEqual({ type: 'final', answer: 'Done.' });
    expect(response.attempts).toBe(2);
    const waited = server.requests[1]!.receivedAt - server.requests[0]!.receivedAt;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(1_800);
  });

  it('fails with a retryable planner.unavailable when 5xx answers exhaust the retries', async () => {
    server.enqueue(errorReply(500), errorReply(503), errorReply(502), textReply('never asked'));
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.unavailable');
    expect(error.failure.retryable).toBe(true);
    expect(error.message).toMatch(/after 3 attempts.*HTTP 502/);
    expect(server.requests).toHaveLength(3);
  });

  it('retries a stream that breaks mid-way', async () => {
    server.enqueue(textReply('A long answer that breaks.', undefined, { cutAfter: 3 }), textReply('Whole answer.'));
    const drafts: string[] = [];
    const response = await plannerFor().next(request({ onDraft: (text) => drafts.push(text) }));
    expect(response.decision).toEqual({ type: 'final', answer: 'Whole answer.' });
    expect(server.requests).toHaveLength(2);
    // The broken attempt's drafts went out; they are drafts, never the answer.
    expect(drafts.join('')).toBe('A long aWhole answer.');
  });

  it('retries a request that exceeds timeoutMs, then fails with planner.unavailable', async () => {
    server.enqueue(delayed(1_500), delayed(1_500));
    const planner = plannerFor({ timeoutMs: 200, retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 50 } });
    const started = Date.now();
    const error = await failureOf(planner.next(request()));
    expectCode(error, 'planner.unavailable');
    expect(error.message).toMatch(/nothing for 200 ms/);
    expect(Date.now() - started).toBeLessThan(1_200);
    await Promise.all(server.requests.map((r) => r.settled));
    expect(server.requests.map((r) => r.aborted)).toEqual([true, true]);
  });

  it('times out a stream that goes idle mid-way and retries it', async () => {
    server.enqueue(textReply('Stalled answer.', undefined, { pause: { after: 2, ms: 1_500 } }), textReply('Fresh.'));
    const response = await plannerFor({ timeoutMs: 200 }).next(request());
    expect(response.decision).toEqual({ type: 'final', answer: 'Fresh.' });
    expect(server.requests).toHaveLength(2);
  });

  it('compacts the oldest tool outputs after a context-length error and retries once', async () => {
    server.enqueue(contextLengthExceeded(), textReply('Fits now.'));
    const big = (c: string) => c.repeat(4_000);
    const messages: PlannerRequest['messages'] = [{ role: 'user', content: 'Compare the files.' }];
    for (const [i, c] of ['a', 'b', 'c'].entries()) {
      const id = `run_abc.s${i}.c0`;
      messages.push({ role: 'assistant', content: '', toolCalls: [{ id, tool: 'fs.read', args: { path: c } }] });
      messages.push({ role: 'tool', toolCallId: id, tool: 'fs.read', content: big(c) });
    }
    const response = await plannerFor().next(request({ stepIndex: 3, messages, tools: [readTool] }));
    expect(response.decision).toEqual({ type: 'final', answer: 'Fits now.' });
    expect(response.attempts).toBe(2);
    expect(response.contextNotes).toHaveLength(1);
    expect(response.contextNotes![0]).toMatch(/replaced the 2 oldest tool outputs/);
    const tools = (i: number) => messagesOf(i).filter((m) => m.role === 'tool');
    expect(tools(0).map((m) => m.content!.length)).toEqual([4_000, 4_000, 4_000]);
    const [a, b, c] = tools(1);
    expect(a!.content).toMatch(/output of 'fs.read' \(4000 characters\) was removed/);
    expect(b!.content).toMatch(/was removed/);
    expect(c!.content).toBe(big('c'));
  });

  it('fails with planner.context_too_large when the compacted context does not fit either', async () => {
    server.enqueue(contextLengthExceeded(), contextLengthExceeded());
    const messages: PlannerRequest['messages'] = [
      { role: 'user', content: 'Read it.' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'run_abc.s0.c0', tool: 'fs.read', args: {} }] },
      { role: 'tool', toolCallId: 'run_abc.s0.c0', tool: 'fs.read', content: 'x'.repeat(10_000) },
    ];
    const error = await failureOf(plannerFor().next(request({ stepIndex: 1, messages, tools: [readTool] })));
    expectCode(error, 'planner.context_too_large');
    expect(server.requests).toHaveLength(2);
  });

  it('fails with planner.context_too_large at once when there is nothing to compact', async () => {
    server.enqueue(
      errorReply(400, 'the request exceeds the available context size', { type: 'exceed_context_size_error' }),
    );
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.context_too_large');
    expect(server.requests).toHaveLength(1);
  });

  it('reads the flat error body of older vLLM and FastChat: its message reaches the failure', async () => {
    server.enqueue(flatErrorReply(400, "[{'type': 'missing', 'loc': ('body', 'messages')}]"), textReply('no'));
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.failed');
    expect(error.message).toMatch(/answered 400 at step 0 of run 'run_abc': \[\{'type': 'missing'/);
    expect(error.message).not.toMatch(/no body/);
    // vLLM's numeric `code` is the status again, not an error code.
    expect(error.failure.details).toMatchObject({ status: 400 });
    expect(error.failure.details?.code).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it('reads a context-length error in the flat shape as one, and compacts after it', async () => {
    const vllm =
      "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens " +
      '(8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.';
    server.enqueue(flatErrorReply(400, vllm), textReply('Fits now.'));
    const messages: PlannerRequest['messages'] = [{ role: 'user', content: 'Compare the files.' }];
    for (const [i, c] of ['a', 'b'].entries()) {
      const id = `run_abc.s${i}.c0`;
      messages.push({ role: 'assistant', content: '', toolCalls: [{ id, tool: 'fs.read', args: { path: c } }] });
      messages.push({ role: 'tool', toolCallId: id, tool: 'fs.read', content: c.repeat(4_000) });
    }
    const response = await plannerFor().next(request({ stepIndex: 2, messages, tools: [readTool] }));
    expect(response.decision).toEqual({ type: 'final', answer: 'Fits now.' });
    expect(response.contextNotes![0]).toMatch(/Context length exceeded: replaced the \d+ oldest tool outputs/);
    server.enqueue(flatErrorReply(400, vllm));
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.context_too_large');
    expect(error.message).toMatch(/maximum context length is 4096 tokens/);
  });

  it('reads an error body whose error is a plain string', async () => {
    server.enqueue({ kind: 'error', status: 400, body: { error: 'model "x" not found' } });
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.failed');
    expect(error.message).toMatch(/answered 400 at step 0 of run 'run_abc': model "x" not found$/);
  });

  it('surfaces a streamed refusal as planner.refused with its text', async () => {
    server.enqueue(refusalReply('I cannot help with that.'));
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.refused');
    expect(error.failure.details).toMatchObject({ refusal: 'I cannot help with that.' });
    expect(server.requests).toHaveLength(1);
  });

  it('surfaces a JSON refusal as planner.refused', async () => {
    server.enqueue(refusalReply('No.'));
    const error = await failureOf(plannerFor({ stream: false }).next(request()));
    expectCode(error, 'planner.refused');
  });

  it('fails with planner.failed on another 4xx, without retrying', async () => {
    server.enqueue(errorReply(401, 'Incorrect API key provided', { code: 'invalid_api_key' }), textReply('no'));
    const error = await failureOf(plannerFor().next(request()));
    expectCode(error, 'planner.failed');
    expect(error.message).toMatch(/401.*Incorrect API key/);
    expect(server.requests).toHaveLength(1);
  });

  it('aborts the HTTP request when the signal aborts, and does not retry', async () => {
    // A reply that would come after any test's limit: the call ends at all only through the abort.
    server.enqueue(delayed(600_000), textReply('never asked'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await failureOf(plannerFor().next(request({ signal: controller.signal })));
    expectCode(error, 'run.cancelled');
    await server.requests[0]!.settled;
    expect(server.requests[0]!.aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests).toHaveLength(1);
  });

  it('aborts mid-stream and while waiting to retry, promptly', async () => {
    server.enqueue(textReply('Slow stream.', undefined, { pause: { after: 2, ms: 2_000 } }));
    const midStream = new AbortController();
    setTimeout(() => midStream.abort(), 150);
    expectCode(await failureOf(plannerFor().next(request({ signal: midStream.signal }))), 'run.cancelled');
    await server.requests[0]!.settled;
    expect(server.requests[0]!.aborted).toBe(true);

    // A backoff longer than any test's limit: the call ends at all only if the abort cuts the wait.
    server.enqueue(rateLimited(600), textReply('never asked'));
    const backoff = new AbortController();
    setTimeout(() => backoff.abort(), 150);
    const error = await failureOf(
      plannerFor({ retry: { maxDelayMs: 600_000 } }).next(request({ signal: backoff.signal })),
    );
    expectCode(error, 'run.cancelled');
    expect(server.requests).toHaveLength(2);
  });

  it('sums usage over every attempt of a step and prices it', async () => {
    server.enqueue(
      emptyReply({ prompt_tokens: 100, completion_tokens: 1 }),
      errorReply(503),
      textReply('Priced.', { prompt_tokens: 200, completion_tokens: 50 }),
    );
    const planner = plannerFor({ prices: { inputPerMTok: 2, outputPerMTok: 8 } });
    const response = await planner.next(request());
    expect(response.attempts).toBe(3);
    expect(response.usage.inputTokens).toBe(300);
    expect(response.usage.outputTokens).toBe(51);
    expect(response.usage.costUsd).toBeCloseTo((300 * 2 + 51 * 8) / 1_000_000, 12);
  });

  it('estimates the prompt from characters / 4, the completion limit and the most the call may cost', () => {
    const planner = plannerFor({ maxCompletionTokens: 1_000, prices: { inputPerMTok: 2, outputPerMTok: 8 } });
    const rest = {
      runId: 'run_abc',
      stepIndex: 0,
      input: 'x',
      messages: [{ role: 'user' as const, content: 'x'.repeat(391) }],
      tools: [],
      context: {},
    };
    // 9 characters of instructions + 391 of message = 400 characters = 100 tokens.
    expect(planner.estimate!(rest)).toEqual({
      inputTokens: 100,
      maxOutputTokens: 1_000,
      maxCostUsd: (100 * 2 + 1_000 * 8) / 1_000_000,
    });
    const withTools = planner.estimate!({ ...rest, tools: [readTool] });
    expect(withTools.inputTokens).toBe(Math.ceil((400 + JSON.stringify([readTool]).length) / 4));
    expect(plannerFor().estimate!(rest)).toEqual({ inputTokens: 100, maxOutputTokens: 4_096 });
  });

  it('reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment', async () => {
    vi.stubEnv('OPENAI_BASE_URL', server.baseURL);
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-env');
    server.enqueue(textReply('From the environment.'));
    const planner = createOpenAIPlanner({ model: 'fake-model', instructions: 'Be brief.' });
    const response = await planner.next(request());
    expect(response.decision).toEqual({ type: 'final', answer: 'From the environment.' });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-from-env');
  });

  it('sends a placeholder key to a server configured by URL alone, and needs one otherwise', async () => {
    vi.stubEnv('OPENAI_BASE_URL', '');
    vi.stubEnv('OPENAI_API_KEY', '');
    server.enqueue(textReply('No key needed.'));
    await createOpenAIPlanner({ model: 'm', instructions: '', baseURL: server.baseURL }).next(request());
    expect(server.requests[0]!.headers.authorization).toBe('Bearer baton-no-key');
    expect(server.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'What is in a.txt?' }]);
    expect(() => createOpenAIPlanner({ model: 'm', instructions: '' })).toThrow(/needs an apiKey/);
  });
});
