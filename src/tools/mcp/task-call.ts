/**
 * An MCP tool called as a task (the spec's task-augmented `tools/call`): the server answers at
 * once with a task handle, which is saved in the call's ledger row (`ctx.saveHandle`) before the
 * call waits; the task is polled with `tasks/get` (its status messages become `progress` events)
 * until it ends, and its result fetched with `tasks/result`. In a Baton run the call lets go once
 * the handle is saved and the run waits holding nothing, polled by whichever runtime loads it
 * (`pollTaskHandle`); elsewhere the call polls itself. A call interrupted after the handle was
 * saved (a restart, a lost connection) follows the same task: the tool is never called twice. A
 * run that ends while its task runs cancels it (`tasks/cancel`).
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  CancelTaskResultSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolFailedError, ToolOutcomeUnknownError, ToolUnavailableError, type ToolContext } from '../define-tool.js';
import { refusal } from './call-result.js';
import type { McpConnection } from './connection.js';

/** What a task call saves as its handle: the server and the task. */
export interface McpTaskHandle {
  kind: 'mcp_task';
  server: string;
  task_id: string;
}

/** The SDK's own request timeout must never come first: the runtime's deadline aborts the signal. */
const NO_SDK_TIMEOUT = 2_147_483_647;

/** Bounds of the wait between two polls (the server's `pollInterval`, else a second). */
const POLL = { min: 50, default: 1_000, max: 5_000 };

/** While its server cannot be reached, a task is polled again after this (doubling), at most `max`. */
const OUTAGE = { first: 200, max: 5_000 };

/** The handle a previous attempt saved, when it is a task of this server. */
export function taskHandleOf(handle: unknown, server: string): McpTaskHandle | null {
  const h = handle as Partial<McpTaskHandle> | null | undefined;
  return h?.kind === 'mcp_task' && h.server === server && typeof h.task_id === 'string' ? (h as McpTaskHandle) : null;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs one request with a signal of its own that follows `signal`, and lets go of `signal` after
 * it: a task polled for hours does not pile listeners on the call's signal.
 */
async function linked<T>(signal: AbortSignal, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await request(controller.signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A task the server no longer knows (a restart, an expired ttl): whether its work happened is unknown. */
class TaskLost extends Error {}

/** One look at a task: still going (its status message, when to look again), or ended with its result. */
type TaskLook =
  | { ended: false; message: string | undefined; pollAfterMs: number }
  | { ended: true; message: string | undefined; result: CallToolResult };

type Requester = <T>(send: (options: { signal: AbortSignal; timeout: number }) => Promise<T>) => Promise<T>;

/** Looks once at a task (`tasks/get`, then `tasks/result` once it ended). */
async function lookAtTask(
  connection: McpConnection,
  server: string,
  tool: string,
  taskId: string,
  request: Requester,
): Promise<TaskLook> {
  let task;
  try {
    task = await request((options) =>
      connection.use((client) =>
        client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema, options),
      ),
    );
  } catch (error) {
    const refused = refusal(error);
    if (refused !== null) {
      throw new TaskLost(
        `MCP server '${server}' no longer knows task ${taskId} of '${tool}' (${refused}): whether it ran is unknown`,
      );
    }
    throw error;
  }
  if (task.status === 'completed' || task.status === 'failed')
    return { ended: true, message: task.statusMessage, result: await resultOf(task) };
  if (task.status === 'cancelled') {
    throw new ToolFailedError(
      `MCP server '${server}' cancelled the task of '${tool}'${task.statusMessage ? `: ${task.statusMessage}` : ''}`,
    );
  }
  const pollAfterMs = Math.min(POLL.max, Math.max(POLL.min, task.pollInterval ?? POLL.default));
  return { ended: false, message: task.statusMessage, pollAfterMs };

  /** The result of an ended task; a failed task without one is the call's failure, with its message. */
  async function resultOf(ended: { status: string; statusMessage?: string | undefined }): Promise<CallToolResult> {
    const failedWith = `MCP task ${taskId} of '${tool}' failed${ended.statusMessage ? `: ${ended.statusMessage}` : ''}`;
    let result: CallToolResult;
    try {
      result = await request((options) =>
        connection.use((client) =>
          client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema, options),
        ),
      );
    } catch (error) {
      if (ended.status === 'failed' && refusal(error) !== null) throw new ToolFailedError(failedWith);
      throw error;
    }
    if (ended.status === 'failed' && !result.isError) {
      return { ...result, isError: true, content: [{ type: 'text', text: failedWith }] };
    }
    return result;
  }
}

/** Requests that follow `signal`, with no SDK timeout of their own. */
function requester(signal: AbortSignal): Requester {
  return (send) => linked(signal, (linkedSignal) => send({ signal: linkedSignal, timeout: NO_SDK_TIMEOUT }));
}

/**
 * Runs `tool` as a task on `server` (or follows the task an earlier attempt started) and answers
 * with its result. Where the runtime can wait for the task holding nothing (`ctx.detach`), the
 * call lets go once the task is still running after its handle is saved; the runtime then polls
 * it (`pollTaskHandle`).
 */
export async function callAsTask(
  connection: McpConnection,
  server: string,
  tool: string,
  params: { arguments: Record<string, unknown>; _meta: Record<string, unknown> },
  ctx: ToolContext,
  ttlMs: number | null,
): Promise<CallToolResult> {
  const request = requester(ctx.signal);
  let taskId = taskHandleOf(ctx.handle, server)?.task_id;
  if (!taskId) {
    const created = await request((options) =>
      connection.use((client) =>
        client.request(
          { method: 'tools/call', params: { name: tool, ...params, task: ttlMs === null ? {} : { ttl: ttlMs } } },
          CreateTaskResultSchema,
          options,
        ),
      ),
    );
    taskId = created.task.taskId;
    // Durable before the call waits: from here on, an interrupted call follows this task.
    await ctx.saveHandle?.({ kind: 'mcp_task', server, task_id: taskId } satisfies McpTaskHandle);
  }
  let told: string | undefined;
  let outage = 0;
  for (;;) {
    let look: TaskLook;
    try {
      look = await lookAtTask(connection, server, tool, taskId, request);
      outage = 0;
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      if (error instanceof TaskLost) {
        // Following it again is pointless: the handle is dropped, so a retry (a person's, or an
        // idempotent tool's) starts a new task.
        await ctx.saveHandle?.(null);
        throw new ToolOutcomeUnknownError(error.message);
      }
      // The server cannot be reached (or the connection broke): the task goes on there, and is
      // polled again once it can be, until the call's time limit.
      if (!(error instanceof ToolUnavailableError || error instanceof ToolOutcomeUnknownError)) throw error;
      outage = Math.min(OUTAGE.max, outage === 0 ? OUTAGE.first : outage * 2);
      ctx.detach?.({ pollAfterMs: outage });
      await sleep(outage, ctx.signal);
      continue;
    }
    if (look.message && look.message !== told) {
      told = look.message;
      await ctx.progress?.({ message: look.message });
    }
    if (look.ended) return look.result;
    ctx.detach?.({ pollAfterMs: look.pollAfterMs });
    await sleep(look.pollAfterMs, ctx.signal);
  }
}

/**
 * Looks once at the task a call left running (its saved handle), for the runtime that waits for
 * it: still going, or ended with its result. A task the server no longer knows is an unknown
 * outcome (`ToolOutcomeUnknownError`); a server that cannot be reached, or a connection that broke
 * mid-poll, is `ToolUnavailableError` (the task goes on; it is polled again later).
 */
export async function pollTaskHandle(
  connection: McpConnection,
  server: string,
  tool: string,
  handle: unknown,
  signal: AbortSignal,
): Promise<{ done: false; pollAfterMs: number; message: string | undefined } | { done: true; result: CallToolResult }> {
  const task = taskHandleOf(handle, server);
  if (!task)
    throw new ToolOutcomeUnknownError(`The handle of the call of '${tool}' names no task of MCP server '${server}'`);
  try {
    const look = await lookAtTask(connection, server, tool, task.task_id, requester(signal));
    return look.ended
      ? { done: true, result: look.result }
      : { done: false, pollAfterMs: look.pollAfterMs, message: look.message };
  } catch (error) {
    if (error instanceof TaskLost) throw new ToolOutcomeUnknownError(error.message);
    if (error instanceof ToolOutcomeUnknownError) throw new ToolUnavailableError(error.message);
    throw error;
  }
}

/** Asks the server to cancel a task a call started (its run ended while the task ran). */
export async function cancelTask(connection: McpConnection, handle: McpTaskHandle): Promise<void> {
  await connection.use((client) =>
    client.request({ method: 'tasks/cancel', params: { taskId: handle.task_id } }, CancelTaskResultSchema, {
      timeout: 10_000,
    }),
  );
}
