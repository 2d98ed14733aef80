/**
 * A real MCP server that runs a tool as a task, written with the SDK (its experimental tasks):
 * `build_report` requires task-augmented execution. Its task says `building` until the file
 * `<journal>.release` exists, then completes with `report on <topic>` (the SDK answers
 * `tasks/get`, `tasks/result` and `tasks/cancel` from the task store). A report on `doom` fails
 * at once with the status message `quota exceeded` and no result. The server keeps its tasks
 * across client sessions (a client that restarts follows its task in a new session), and
 * journals each task created, polled and cancelled (`{kind, task_id, topic?}` lines), so a test
 * counts what it saw across Baton's restarts.
 *
 *   node --import tsx test/helpers/mcp-task-server.ts --journal <file> [--port N]   (prints {"url", "pid"})
 */
import { appendFileSync, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';

const { values } = parseArgs({ options: { journal: { type: 'string' }, port: { type: 'string' } } });
const journal = values.journal!;
const log = (entry: Record<string, unknown>) => appendFileSync(journal, `${JSON.stringify(entry)}\n`);

/** One store for every session: a task outlives the session that created it. */
const inner = new InMemoryTaskStore();
const shared: TaskStore = {
  createTask: (params, requestId, request) => inner.createTask(params, requestId, request),
  getTask: (taskId) => {
    log({ kind: 'get', task_id: taskId });
    return inner.getTask(taskId);
  },
  storeTaskResult: (taskId, status, result) => inner.storeTaskResult(taskId, status, result),
  getTaskResult: (taskId) => {
    log({ kind: 'result', task_id: taskId });
    return inner.getTaskResult(taskId);
  },
  updateTaskStatus: async (taskId, status, message) => {
    if (status === 'cancelled') log({ kind: 'cancel', task_id: taskId });
    await inner.updateTaskStatus(taskId, status, message);
  },
  listTasks: (cursor) => inner.listTasks(cursor),
};

function makeServer(): McpServer {
  const server = new McpServer(
    { name: 'reports', version: '1.0.0' },
    { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore: shared },
  );
  server.experimental.tasks.registerToolTask(
    'build_report',
    {
      description: 'Builds a report on a topic (a long task)',
      inputSchema: { topic: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      execution: { taskSupport: 'required' },
    },
    {
      async createTask({ topic }, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl ?? null, pollInterval: 50 });
        await taskStore.updateTaskStatus(task.taskId, 'working', 'building');
        log({ kind: 'create', task_id: task.taskId, topic });
        if (topic === 'doom') {
          await inner.updateTaskStatus(task.taskId, 'failed', 'quota exceeded');
          return { task: { ...task, status: 'failed', statusMessage: 'quota exceeded' } };
        }
        // The work: done once the test releases it (unless cancelled first).
        const work = setInterval(() => {
          void (async () => {
            const now = await inner.getTask(task.taskId);
            if (!now || now.status !== 'working') return clearInterval(work);
            if (!existsSync(`${journal}.release`)) return;
            clearInterval(work);
            await inner.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: `report on ${topic}` }],
            });
          })();
        }, 20);
        return { task: { ...task, statusMessage: 'building' } };
      },
      getTask: async (_args, { taskId, taskStore }) => await taskStore.getTask(taskId),
      getTaskResult: async (_args, { taskId, taskStore }) => (await taskStore.getTaskResult(taskId)) as never,
    },
  );
  return server;
}

const sessions = new Map<string, StreamableHTTPServerTransport>();
const http = createServer((req: IncomingMessage, res: ServerResponse) => {
  void (async () => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (typeof id === 'string' && !transport) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Session not found' }, id: null }));
      return;
    }
    if (!transport) {
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => void sessions.set(sid, fresh),
      });
      fresh.onclose = () => {
        if (fresh.sessionId) sessions.delete(fresh.sessionId);
      };
      await makeServer().connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res);
  })().catch((error: unknown) => {
    process.stderr.write(`mcp task server: ${String(error)}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  });
});
await new Promise<void>((resolve) => http.listen(Number(values.port ?? 0), '127.0.0.1', resolve));
const address = http.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp`, pid: process.pid })}\n`);
