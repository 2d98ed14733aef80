/**
 * A real HTTP server on loopback that speaks Chat Completions (JSON and SSE), scripted per
 * test with a queue of responses. It records every request, so tests count calls, read the
 * bodies sent, and see whether the client closed a connection before the response ended.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Token counts a reply reports. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A tool call in a scripted reply; object arguments are sent as JSON, strings as they are. */
export interface FakeToolCall {
  name: string;
  arguments: string | Record<string, unknown>;
  id?: string;
}

/** A reply rendered as a JSON completion or as an SSE stream, whichever the request asked for. */
export interface FakeReply {
  kind: 'reply';
  content?: string | null;
  toolCalls?: FakeToolCall[];
  refusal?: string;
  usage?: FakeUsage;
  finishReason?: string;
  /** Streams only: characters per content / arguments delta. */
  chunkSize?: number;
  /** Streams only: destroy the socket after this many `data:` lines. */
  cutAfter?: number;
  /** Streams only: wait this long after `pauseAfter` data lines (an idle stream). */
  pause?: { after: number; ms: number };
}

/** A scripted response. */
export type FakeResponse =
  | FakeReply
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'delay'; ms: number; then: FakeResponse }
  | { kind: 'raw'; chunks: unknown[]; done?: boolean };

/** One request the server received. */
export interface RecordedRequest {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  receivedAt: number;
  /** True when the client closed the connection before the response was complete. */
  aborted: boolean;
  /** Resolves when the response ended or the connection closed. */
  settled: Promise<void>;
}

/** A running fake server. */
export interface FakeOpenAI {
  /** The base URL to give the client, ending in `/v1`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Streams that have reached their scripted `pause` (the client holds a partial answer). */
  readonly paused: number;
  enqueue(...responses: FakeResponse[]): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 10, completion_tokens: 5 };

/** A text answer. */
export function textReply(
  content: string,
  usage: FakeUsage = DEFAULT_USAGE,
  extra: Partial<FakeReply> = {},
): FakeReply {
  return { kind: 'reply', content, usage, ...extra };
}

/** One or more tool calls, with optional text. */
export function toolCallsReply(calls: FakeToolCall[], extra: Partial<FakeReply> = {}): FakeReply {
  return { kind: 'reply', toolCalls: calls, usage: DEFAULT_USAGE, ...extra };
}

/** A refusal. */
export function refusalReply(refusal: string): FakeReply {
  return { kind: 'reply', content: null, refusal, usage: DEFAULT_USAGE };
}

/** No content and no tool calls. */
export function emptyReply(usage: FakeUsage = DEFAULT_USAGE): FakeReply {
  return { kind: 'reply', content: '', usage };
}

/** An HTTP error with OpenAI's error body. */
export function errorReply(
  status: number,
  message = `fake error ${status}`,
  options: { code?: string; type?: string; headers?: Record<string, string> } = {},
): FakeResponse {
  const error = { message, type: options.type ?? 'server_error', code: options.code ?? null, param: null };
  return { kind: 'error', status, body: { error }, headers: options.headers ?? {} };
}

/** An HTTP error with the flat body of older vLLM and FastChat: `{ "object": "error", "message", … }`. */
export function flatErrorReply(status: number, message: string): FakeResponse {
  return {
    kind: 'error',
    status,
    body: { object: 'error', message, type: 'BadRequestError', param: null, code: status },
  };
}

/** A 429 asking the client to wait `seconds`. */
export function rateLimited(seconds: number): FakeResponse {
  return errorReply(429, 'Rate limit reached', { type: 'requests', headers: { 'retry-after': String(seconds) } });
}

/** OpenAI's 400 for a prompt that does not fit the context window. */
export function contextLengthExceeded(): FakeResponse {
  const message =
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.";
  return errorReply(400, message, { code: 'context_length_exceeded', type: 'invalid_request_error' });
}

/** Any response, after a delay. */
export function delayed(ms: number, then: FakeResponse = textReply('late')): FakeResponse {
  return { kind: 'delay', ms, then };
}

function split(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

function argsOf(call: FakeToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function finishOf(reply: FakeReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
}

function toCompletion(reply: FakeReply, model: string): unknown {
  const message = {
    role: 'assistant',
    content: reply.content ?? null,
    refusal: reply.refusal ?? null,
    ...(reply.toolCalls?.length && {
      tool_calls: reply.toolCalls.map((call, i) => ({
        id: call.id ?? `call_${i}`,
        type: 'function',
        function: { name: call.name, arguments: argsOf(call) },
      })),
    }),
  };
  const choices = [{ index: 0, message, finish_reason: finishOf(reply), logprobs: null }];
  return { id: 'chatcmpl-fake', object: 'chat.completion', created: 0, model, choices, usage: reply.usage };
}

/** The `data:` payloads of a reply streamed delta by delta; content and arguments split across chunks. */
function toChunks(reply: FakeReply, model: string, includeUsage: boolean): unknown[] {
  const size = reply.chunkSize ?? 4;
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const part of split(reply.content ?? '', size)) chunks.push(chunk({ content: part }));
  for (const part of split(reply.refusal ?? '', size)) chunks.push(chunk({ refusal: part }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    const id = call.id ?? `call_${index}`;
    chunks.push(chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const part of split(argsOf(call), size)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  chunks.push(chunk({}, finishOf(reply)));
  if (includeUsage && reply.usage) {
    chunks.push({
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [],
      usage: reply.usage,
    });
  }
  return chunks;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function writeStream(
  res: ServerResponse,
  chunks: unknown[],
  options: { cutAfter?: number; pause?: { after: number; ms: number }; done?: boolean; onPause?: () => void },
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [i, chunk] of chunks.entries()) {
    if (res.destroyed) return;
    if (options.cutAfter === i) {
      // Let what was written reach the client first, then break the connection mid-stream.
      await sleep(20);
      res.socket?.destroy();
      return;
    }
    if (options.pause && options.pause.after === i) {
      options.onPause?.();
      await sleep(options.pause.ms);
    }
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    await sleep(1);
  }
  if (options.done !== false) res.write('data: [DONE]\n\n');
  res.end();
}

async function respond(
  res: ServerResponse,
  response: FakeResponse,
  body: Record<string, unknown>,
  onPause?: () => void,
): Promise<void> {
  const model = String(body.model ?? 'fake-model');
  switch (response.kind) {
    case 'error':
      res.writeHead(response.status, { 'content-type': 'application/json', ...response.headers });
      res.end(JSON.stringify(response.body ?? {}));
      return;
    case 'delay':
      await sleep(response.ms);
      if (!res.destroyed) await respond(res, response.then, body, onPause);
      return;
    case 'raw':
      await writeStream(res, response.chunks, { done: response.done ?? true });
      return;
    case 'reply': {
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(toCompletion(response, model)));
        return;
      }
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      const options: { cutAfter?: number; pause?: { after: number; ms: number }; onPause?: () => void } = {};
      if (onPause) options.onPause = onPause;
      if (response.cutAfter !== undefined) options.cutAfter = response.cutAfter;
      if (response.pause) options.pause = response.pause;
      await writeStream(res, toChunks(response, model, includeUsage), options);
    }
  }
}

/** Starts a fake Chat Completions server on an ephemeral loopback port. */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: FakeResponse[] = [];
  const requests: RecordedRequest[] = [];
  let paused = 0;
  const onPause = () => void (paused += 1);
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      let finished!: () => void;
      const record: RecordedRequest = {
        body: {},
        headers: req.headers,
        receivedAt: Date.now(),
        aborted: false,
        settled: new Promise<void>((resolve) => (finished = resolve)),
      };
      res.on('close', () => {
        if (!res.writableFinished) record.aborted = true;
        finished();
      });
      try {
        record.body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
      } catch {
        // Recorded with an empty body; the test sees it.
      }
      requests.push(record);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const response = queue.shift() ?? errorReply(500, 'fake-openai: no scripted response left');
      respond(res, response, record.body, onPause).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get paused() {
      return paused;
    },
    enqueue: (...responses) => void queue.push(...responses),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
