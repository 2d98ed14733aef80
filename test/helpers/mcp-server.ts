/**
 * A real MCP server for the tests, written with the SDK: a small note store whose tools carry
 * every kind of annotation. It journals each call it receives (tool, arguments, `_meta`, pid) to
 * a JSONL file, so a test can count what the server saw across its own restarts and Baton's.
 *
 *   node --import tsx test/helpers/mcp-server.ts --journal <file> --stdio [--refusing] [--images] [--asking]
 *   node --import tsx test/helpers/mcp-server.ts --journal <file> --http [--port N] [--token T] [--sse] [--asking]   (prints {"url": …})
 *
 * Over HTTP it answers each request with one JSON body, or with `--sse` with an SSE stream per
 * request, as the SDK's example servers (server-everything among them) do. With `--refusing` it
 * also has two tools a client cannot simply call: `research`, which it refuses with a JSON-RPC
 * error (-32600 InvalidRequest) before running anything, and `deep_research`, which requires
 * task-augmented execution (`execution.taskSupport: "required"`). With `--images` it also has
 * `chart`, which answers with a text and a PNG (`noisePng(128, seed)`, about 49 KB). With
 * `--asking` it has two tools that ask a person (see `addAskingTools`).
 */
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { readJournal, type JournalEntry } from './mcp-journal.js';
import { noisePng } from './png.js';

type Meta = Record<string, unknown> | undefined;

/** Adds the tools a client cannot simply call (`--refusing`). */
function addRefusingTools(
  server: McpServer,
  log: (kind: JournalEntry['kind'], tool: string, args: Record<string, unknown>, meta: Meta) => void,
): void {
  server.registerTool(
    'research',
    {
      description: 'Research a question (refused: the server runs it only as a task)',
      inputSchema: { question: z.string() },
    },
    (args, extra) => {
      log('call', 'research', args, extra._meta);
      return { content: [{ type: 'text', text: 'researched' }] };
    },
  );
  const notHere = () => Promise.reject(new Error('tasks are not run by these tests'));
  server.experimental.tasks.registerToolTask(
    'deep_research',
    {
      description: 'Research a question at length',
      inputSchema: { question: z.string() },
      execution: { taskSupport: 'required' },
    },
    { createTask: notHere, getTask: notHere, getTaskResult: notHere },
  );
  // The SDK's McpServer turns every error of a tool into an isError result; a server that refuses
  // a request answers with a JSON-RPC error instead, before any tool runs.
  type Handler = (request: JSONRPCRequest, extra: unknown) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const call = handlers.get('tools/call')!;
  handlers.set('tools/call', (request, extra) => {
    const params = request.params as { name?: string; arguments?: Record<string, unknown>; _meta?: Meta };
    if (params.name !== 'research') return call(request, extra);
    log('refused', 'research', params.arguments ?? {}, params._meta);
    return Promise.reject(new McpError(ErrorCode.InvalidRequest, "Tool 'research' must be called as a task"));
  });
}

/**
 * Adds the tools that ask a person (`--asking`): `publish_note` asks who may read the note with
 * an `elicitation/create` request while the call stays open (the 2025-11-25 way), and writes the
 * effect once per key with the answer; `rename_note` answers its first call with an
 * `input_required` result (the 2026-07-28 way: the question in `inputRequests`, the note in
 * `requestState`) and renames the note when called again with the answer, checking the state.
 */
function addAskingTools(
  server: McpServer,
  log: (kind: JournalEntry['kind'], tool: string, args: Record<string, unknown>, meta: Meta) => void,
  once: (tool: string, args: Record<string, unknown>, meta: Meta) => boolean,
): void {
  const text = (t: string, isError = false) => ({ content: [{ type: 'text' as const, text: t }], isError });
  server.registerTool(
    'publish_note',
    {
      description: 'Publish a note (asks who may read it)',
      inputSchema: { title: z.string().min(1) },
      annotations: { idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      log('call', 'publish_note', args, extra._meta);
      const asked = await server.server.elicitInput(
        {
          mode: 'form',
          message: `Who may read '${args.title}'?`,
          requestedSchema: {
            type: 'object',
            properties: { audience: { type: 'string', enum: ['team', 'public'] } },
            required: ['audience'],
          },
        },
        { timeout: 2_147_483_647 },
      );
      log('answer', 'publish_note', { ...args, action: asked.action, content: asked.content ?? null }, extra._meta);
      if (asked.action !== 'accept') return text(`not published: ${asked.action}`, true);
      const audience = String(asked.content?.audience);
      once('publish_note', { title: args.title, audience }, extra._meta);
      return text(`published ${args.title} to ${audience}`);
    },
  );
  // Asks as publish_note does, but gives up on the answer after `wait_ms` (its own request
  // timeout) and ends the call with an error result while the question is still open.
  server.registerTool(
    'quick_publish',
    {
      description: 'Publish a note if someone says who may read it quickly',
      inputSchema: { title: z.string().min(1), wait_ms: z.number().int().positive() },
      annotations: { idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      log('call', 'quick_publish', args, extra._meta);
      const schema = { type: 'object' as const, properties: { audience: { type: 'string' as const } } };
      try {
        const message = `Who may read '${args.title}'? (quick)`;
        await server.server.elicitInput({ mode: 'form', message, requestedSchema: schema }, { timeout: args.wait_ms });
        return text(`published ${args.title}`);
      } catch (error) {
        log('answer', 'quick_publish', { ...args, action: 'timeout' }, extra._meta);
        return text(`not published: ${error instanceof Error ? error.message : String(error)}`, true);
      }
    },
  );
  server.registerTool(
    'rename_note',
    {
      description: 'Rename a note (asks for the new title)',
      inputSchema: { title: z.string().min(1) },
      annotations: { destructiveHint: false, openWorldHint: false },
    },
    (args, extra) => text(`rename_note is answered by the raw handler (${args.title}, ${String(extra._meta)})`, true),
  );
  type Handler = (request: JSONRPCRequest, extra: unknown) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  const call = handlers.get('tools/call')!;
  handlers.set('tools/call', (request, extra) => {
    const params = request.params as {
      name?: string;
      arguments?: Record<string, unknown>;
      _meta?: Meta;
      inputResponses?: Record<string, { action?: string; content?: Record<string, unknown> }>;
      requestState?: string;
    };
    if (params.name !== 'rename_note') return call(request, extra);
    const args = params.arguments ?? {};
    const answer = params.inputResponses?.new_title;
    log('call', 'rename_note', { ...args, answer: answer ?? null, state: params.requestState ?? null }, params._meta);
    const state = JSON.stringify({ title: args.title });
    if (answer?.action !== 'accept' || typeof answer.content?.title !== 'string') {
      return Promise.resolve({
        resultType: 'input_required',
        inputRequests: {
          new_title: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: `New title for '${String(args.title)}'?`,
              requestedSchema: {
                type: 'object',
                properties: { title: { type: 'string', minLength: 1 } },
                required: ['title'],
              },
            },
          },
        },
        requestState: Buffer.from(state).toString('base64'),
      });
    }
    if (Buffer.from(params.requestState ?? '', 'base64').toString() !== state) {
      return Promise.reject(new McpError(ErrorCode.InvalidParams, 'requestState does not match the request'));
    }
    log('effect', 'rename_note', { title: args.title, to: answer.content.title }, params._meta);
    return Promise.resolve(text(`renamed ${String(args.title)} to ${answer.content.title}`));
  });
}

function makeServer(journal: string, refusing = false, images = false, asking = false): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  const log = (kind: JournalEntry['kind'], tool: string, args: Record<string, unknown>, meta: Meta) => {
    const entry: JournalEntry = {
      kind,
      tool,
      args,
      key: (meta?.['baton/idempotency_key'] as string | undefined) ?? null,
      run_id: (meta?.['baton/run_id'] as string | undefined) ?? null,
      pid: process.pid,
    };
    appendFileSync(journal, `${JSON.stringify(entry)}\n`);
  };
  const notes = () => {
    const live = new Map<string, string>();
    for (const e of readJournal(journal).filter((e) => e.kind === 'effect')) {
      if (e.tool === 'put_note') live.set(String(e.args.title), String(e.args.body));
      if (e.tool === 'delete_note') live.delete(String(e.args.title));
    }
    return live;
  };
  /** The effect of an idempotent call happens once per key, whatever the server's restarts. */
  const once = (tool: string, args: Record<string, unknown>, meta: Meta) => {
    const key = meta?.['baton/idempotency_key'];
    const done = readJournal(journal).some((e) => e.kind === 'effect' && e.tool === tool && e.key === key);
    if (!done) log('effect', tool, args, meta);
    return !done;
  };
  const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

  server.registerTool(
    'list_notes',
    {
      description: 'List the titles of the notes',
      inputSchema: {},
      outputSchema: { titles: z.array(z.string()) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (_args, extra) => {
      log('call', 'list_notes', {}, extra._meta);
      const titles = [...notes().keys()];
      return { content: [{ type: 'text', text: titles.join(', ') }], structuredContent: { titles } };
    },
  );
  server.registerTool(
    'read_note',
    {
      description: 'Read a note',
      inputSchema: { title: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) => {
      log('call', 'read_note', args, extra._meta);
      const body = notes().get(args.title);
      return body === undefined ? { ...text(`no note titled ${args.title}`), isError: true } : text(body);
    },
  );
  server.registerTool(
    'put_note',
    {
      description: 'Write a note (the same request key writes it once)',
      inputSchema: { title: z.string().min(1), body: z.string(), crash_first: z.boolean().optional() },
      annotations: { idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    (args, extra) => {
      log('call', 'put_note', args, extra._meta);
      const fresh = once('put_note', { title: args.title, body: args.body }, extra._meta);
      const key = extra._meta?.['baton/idempotency_key'];
      if (args.crash_first && !readJournal(journal).some((e) => e.kind === 'crash' && e.key === key)) {
        // The effect is written; the server dies before it answers.
        log('crash', 'put_note', args, extra._meta);
        process.exit(1);
      }
      return text(fresh ? `saved ${args.title}` : `${args.title} was already saved`);
    },
  );
  server.registerTool(
    'delete_note',
    {
      description: 'Delete a note',
      inputSchema: { title: z.string().min(1) },
      annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) => {
      log('call', 'delete_note', args, extra._meta);
      if (!notes().has(args.title)) return { ...text(`no note titled ${args.title}`), isError: true };
      once('delete_note', args, extra._meta);
      return text(`deleted ${args.title}`);
    },
  );
  // No annotations at all: the spec's defaults (unsafe, destructive, open world).
  server.registerTool(
    'send_mail',
    {
      description: 'Send a mail (hold: true keeps the call open until the server dies)',
      inputSchema: { to: z.string(), subject: z.string(), hold: z.boolean().optional() },
    },
    async (args, extra) => {
      log('call', 'send_mail', args, extra._meta);
      log('effect', 'send_mail', args, extra._meta);
      // Held until the client cancels it (journaled), or forever when the client just goes away.
      if (args.hold) {
        await new Promise((resolve) =>
          extra.signal.addEventListener('abort', () => resolve(log('cancelled', 'send_mail', args, extra._meta))),
        );
      }
      return text(`sent to ${args.to}`);
    },
  );
  server.registerTool(
    'fetch_page',
    { description: 'Fetch a web page', inputSchema: { url: z.string() }, annotations: { readOnlyHint: true } },
    (args, extra) => {
      log('call', 'fetch_page', args, extra._meta);
      return text(`<html>${args.url}</html>`);
    },
  );
  if (refusing) addRefusingTools(server, log);
  if (asking) addAskingTools(server, log, once);
  if (images) {
    server.registerTool(
      'chart',
      {
        description: 'Draw a chart of the notes',
        inputSchema: { seed: z.number().int() },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      (args, extra) => {
        log('call', 'chart', args, extra._meta);
        const data = noisePng(128, args.seed).toString('base64');
        return {
          content: [
            { type: 'text', text: `chart ${args.seed}` },
            { type: 'image', data, mimeType: 'image/png' },
          ],
        };
      },
    );
  }
  return server;
}

async function serveHttp(
  journal: string,
  port: number,
  token: string | undefined,
  staleSession: number,
  sse: boolean,
  refusing: boolean,
  images: boolean,
  asking: boolean,
): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      // With --token, every request must carry it (as a deployed server would ask).
      if (token && req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null }));
        return;
      }
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (typeof id === 'string' && !transport) {
        // The spec: an unknown session is answered 404, and the client starts a new one. With
        // --stale-session 400 it answers as the SDK's example servers (server-everything) do.
        const message = staleSession === 400 ? 'Bad Request: No valid session ID provided' : 'Session not found';
        res.writeHead(staleSession, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
        return;
      }
      if (!transport) {
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: !sse,
          onsessioninitialized: (sid) => void sessions.set(sid, fresh),
        });
        fresh.onclose = () => {
          if (fresh.sessionId) sessions.delete(fresh.sessionId);
        };
        await makeServer(journal, refusing, images, asking).connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      process.stderr.write(`mcp test server: ${String(error)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const address = http.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${actual}/mcp`, pid: process.pid })}\n`);
}

const { values } = parseArgs({
  options: {
    journal: { type: 'string' },
    stdio: { type: 'boolean' },
    http: { type: 'boolean' },
    port: { type: 'string' },
    token: { type: 'string' },
    'stale-session': { type: 'string' },
    sse: { type: 'boolean' },
    refusing: { type: 'boolean' },
    images: { type: 'boolean' },
    asking: { type: 'boolean' },
  },
});
if (values.journal && (values.stdio || values.http)) {
  const refusing = values.refusing ?? false;
  const images = values.images ?? false;
  const asking = values.asking ?? false;
  if (values.stdio) await makeServer(values.journal, refusing, images, asking).connect(new StdioServerTransport());
  else {
    const staleSession = Number(values['stale-session'] ?? 404);
    await serveHttp(
      values.journal,
      Number(values.port ?? 0),
      values.token,
      staleSession,
      values.sse ?? false,
      refusing,
      images,
      asking,
    );
  }
}
