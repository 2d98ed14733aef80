/**
 * `createMcpTools`: an MCP server's tools as Baton tools. Each tool keeps the server's JSON
 * Schema (shown to the model as is, and validated before a call), runs with the effect class,
 * risk and trust its annotations map to (or the application's override), and sends the call id
 * as the idempotency key in the request's `_meta`. A result with `isError` is a tool failure the
 * model sees, and so is a request the server refused (a JSON-RPC error, an HTTP 4xx): it did not
 * run. Only a connection lost mid-call or a timeout leaves the outcome unknown, which the runtime
 * resolves by effect class like any tool's. A tool that supports MCP tasks runs as one when its
 * server declares them (`task-call.ts`); one that requires tasks of a server that does not is
 * left out, and listed in `skipped` with the reason.
 */
import { z } from 'zod';
import { CallToolResultSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { BatonError, createFailure } from '../../failure.js';
import {
  defineTool,
  ToolFailedError,
  ToolInputRequired,
  type AnyTool,
  type PollContext,
  type ToolSpec,
} from '../define-tool.js';
import { mapAnnotations, type McpAnnotations } from './annotations.js';
import { outputOf, refusal, textOf } from './call-result.js';
import { describeServer, McpConnection } from './connection.js';
import { inputRequiredOf, inputResponsesOf, MAX_IMMEDIATE_ROUNDS } from './input-required.js';
import type { McpServerSpec } from './server-spec.js';
import { callAsTask, cancelTask, pollTaskHandle, taskHandleOf } from './task-call.js';

/** The `_meta` keys a server receives with every call Baton makes. */
export const MCP_META = {
  /** The Baton tool call id: the same for every attempt of one call, so a server can deduplicate. */
  idempotencyKey: 'baton/idempotency_key',
  runId: 'baton/run_id',
  attempt: 'baton/attempt',
} as const;

/**
 * What the application sets over a tool's annotations: its effect, risk and trust, its limits,
 * and what an MCP server cannot say (how to reconcile a call, how to undo one).
 */
export type McpToolOverride = Partial<
  Pick<
    ToolSpec<unknown, unknown>,
    | 'effect'
    | 'risk'
    | 'trustedOutput'
    | 'timeoutMs'
    | 'maxOutputBytes'
    | 'reconcile'
    | 'compensate'
    | 'compensateEffect'
    | 'reconcileCompensation'
    | 'expiresIn'
    | 'onExpire'
  >
>;

export interface McpToolsOptions {
  /** The server's name in tool origins and messages (default: the name it gives in `initialize`). */
  name?: string;
  /** Put before each tool's name (e.g. `files.`), so two servers' tools cannot collide. */
  prefix?: string;
  /** Only these tools (server names); all by default. */
  include?: string[];
  /** Per tool (server name): effect, risk, trust and limits set by the application. */
  overrides?: Record<string, McpToolOverride>;
  /** A call's time limit (default: Baton's tool default). */
  timeoutMs?: number;
  /** How long connecting may take (default 30 s). */
  connectTimeoutMs?: number;
  /**
   * Run the tools that support MCP tasks (`execution.taskSupport` `required`, or `optional`) as
   * tasks, when the server declares tasks for `tools/call` (default true): the task's handle is
   * saved with the call, which follows it across restarts and never calls the tool twice.
   */
  tasks?: boolean;
  /** How long the server keeps a task's result (`ttl`, default: the server's). */
  taskTtlMs?: number;
  /** A task call's time limit, from its first request to its result (default 24 h; `overrides` per tool). */
  taskTimeoutMs?: number;
}

/** A server tool that is not offered to the model, and why. */
export interface McpSkippedTool {
  /** Its name on the server. */
  tool: string;
  reason: string;
}

/** A server's tools, and the connection they share. */
export interface McpToolset {
  /** The server's name. */
  server: string;
  tools: AnyTool[];
  /** The server's tools Baton cannot call (so the model is never offered them), with the reason. */
  skipped: McpSkippedTool[];
  /** How many times the connection was made (it is made again after the server went away). */
  readonly connects: number;
  /** Closes the connection (a stdio server's process exits). */
  close(): Promise<void>;
}

const NAME = /^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/;

/** A JSON Schema as a zod input: zod's own conversion, or the SDK's validator where zod cannot convert. */
function inputOf(schema: Record<string, unknown>): z.ZodType<unknown> {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    const validate = new AjvJsonSchemaValidator().getValidator<unknown>(schema as never);
    return z.unknown().superRefine((value, ctx) => {
      const checked = validate(value);
      if (!checked.valid)
        ctx.addIssue({ code: 'custom', message: checked.errorMessage ?? 'does not match the schema' });
    });
  }
}

/** Why Baton cannot call a listed tool, or null when it can. */
function uncallable(tool: McpTool, tasks: boolean, turnedOff: boolean): string | null {
  // A tool that requires task-augmented execution refuses a plain call (JSON-RPC -32600).
  if (tool.execution?.taskSupport === 'required' && !tasks) {
    const why = turnedOff ? 'tasks are turned off (tasks: false)' : 'the server does not declare tasks for tools/call';
    return `it requires task-augmented execution (execution.taskSupport: "required"), and ${why}`;
  }
  return null;
}

/** Whether a tool runs as a task: it supports tasks, and tasks are on for the server. */
function runsAsTask(tool: McpTool, tasks: boolean): boolean {
  const support = tool.execution?.taskSupport;
  return tasks && (support === 'required' || support === 'optional');
}

function toolName(options: McpToolsOptions, name: string): string {
  const full = `${options.prefix ?? ''}${name}`.replace(/[^a-zA-Z0-9_.-]/g, '_');
  const named = /^[a-zA-Z]/.test(full) ? full : `mcp_${full}`;
  if (!NAME.test(named)) {
    throw new BatonError(
      createFailure('input.invalid', `MCP tool '${name}' cannot be named '${named}': names are at most 64 characters`),
    );
  }
  return named;
}

/** The output of an ended task's result (an error result is the call's failure). */
function taskOutput(result: CallToolResult, tool: string): unknown {
  if (result.isError) throw new ToolFailedError(textOf(result) || `MCP tool '${tool}' returned an error`);
  return outputOf(result);
}

/** One server tool as a Baton tool. */
function toBatonTool(
  connection: McpConnection,
  server: string,
  tool: McpTool,
  options: McpToolsOptions,
  tasks: boolean,
): AnyTool {
  const override = options.overrides?.[tool.name] ?? {};
  const asTask = runsAsTask(tool, tasks);
  const mapped = mapAnnotations(tool.annotations as McpAnnotations | undefined);
  const overridden = (['effect', 'risk', 'trustedOutput'] as const).filter((k) => override[k] !== undefined);
  const schema = tool.inputSchema as Record<string, unknown>;
  const timeoutMs = override.timeoutMs ?? (asTask ? (options.taskTimeoutMs ?? 86_400_000) : options.timeoutMs);
  return defineTool<unknown, unknown>({
    name: toolName(options, tool.name),
    description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${server})`,
    input: inputOf(schema),
    parameters: schema,
    effect: override.effect ?? mapped.effect,
    risk: override.risk ?? mapped.risk,
    trustedOutput: override.trustedOutput ?? mapped.trustedOutput,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(override.maxOutputBytes !== undefined ? { maxOutputBytes: override.maxOutputBytes } : {}),
    ...(override.reconcile ? { reconcile: override.reconcile } : {}),
    ...(override.compensate ? { compensate: override.compensate } : {}),
    ...(override.compensateEffect ? { compensateEffect: override.compensateEffect } : {}),
    ...(override.reconcileCompensation ? { reconcileCompensation: override.reconcileCompensation } : {}),
    // How long an approval of its calls, and a question its server asks, wait for a person.
    ...(override.expiresIn !== undefined ? { expiresIn: override.expiresIn } : {}),
    ...(override.onExpire !== undefined ? { onExpire: override.onExpire } : {}),
    origin: {
      kind: 'mcp',
      server,
      tool: tool.name,
      annotations: tool.annotations ? { ...tool.annotations } : null,
      overridden: overridden.map((k) => (k === 'trustedOutput' ? 'trusted_output' : k)),
    },
    // A run that ends while its task runs cancels it (the task's handle, saved with the call).
    ...(asTask
      ? {
          cancelHandle: async (handle: unknown) => {
            const task = taskHandleOf(handle, server);
            if (task) await cancelTask(connection, task);
          },
          // A run waiting on its task polls it (the call let go once the handle was saved).
          pollHandle: async (handle: unknown, ctx: PollContext) => {
            const look = await pollTaskHandle(connection, server, tool.name, handle, ctx.signal);
            if (!look.done) {
              return {
                done: false,
                pollAfterMs: look.pollAfterMs,
                ...(look.message ? { progress: { message: look.message } } : {}),
              };
            }
            return { done: true, output: taskOutput(look.result, tool.name) };
          },
        }
      : {}),
    async execute(input, ctx) {
      const meta = {
        [MCP_META.idempotencyKey]: ctx.idempotencyKey,
        [MCP_META.runId]: ctx.runId,
        [MCP_META.attempt]: ctx.attempt,
      };
      if (asTask) {
        const args = { arguments: input as Record<string, unknown>, _meta: meta };
        return taskOutput(
          await callAsTask(connection, server, tool.name, args, ctx, options.taskTtlMs ?? null),
          tool.name,
        );
      }
      // The answers to the questions the server asked last round (an `input_required` result).
      let answered = ctx.input ? inputResponsesOf(ctx.input) : null;
      for (let round = 0; ; round += 1) {
        let result: CallToolResult;
        // While the call is in flight, the server's elicitation requests are this call's questions.
        const release = connection.asking(ctx.idempotencyKey, ctx.ask, server);
        try {
          // A plain request rather than `client.callTool`: every McpError it can end with is then
          // the server's answer (callTool adds its own, some after the tool ran).
          result = await connection.use((client) =>
            client.request(
              {
                method: 'tools/call',
                params: {
                  name: tool.name,
                  arguments: input as Record<string, unknown>,
                  _meta: meta,
                  ...(answered ?? {}),
                },
              },
              CallToolResultSchema,
              // The runtime's timeout aborts the signal; the SDK's own must not come first.
              { signal: ctx.signal, timeout: 2_147_483_647 },
            ),
          );
        } catch (error) {
          const refused = refusal(error);
          if (refused !== null) {
            throw new ToolFailedError(`MCP server '${server}' refused the call of '${tool.name}': ${refused}`);
          }
          throw error;
        } finally {
          release();
        }
        const asked = inputRequiredOf(result, server, tool.name);
        if (asked?.kind === 'ask') throw new ToolInputRequired(asked.question, { state: asked.state });
        if (asked?.kind === 'again') {
          // Only state to echo, nothing to ask: the spec lets the client call again at once.
          if (round >= MAX_IMMEDIATE_ROUNDS) {
            throw new ToolFailedError(`MCP server '${server}' kept answering '${tool.name}' with input_required`);
          }
          answered = { requestState: asked.requestState };
          continue;
        }
        if (result.isError) throw new ToolFailedError(textOf(result) || `MCP tool '${tool.name}' returned an error`);
        return outputOf(result);
      }
    },
  });
}

/**
 * Connects to an MCP server and returns its tools as Baton tools, for `createRuntime({ tools })`
 * or an agent module. Close the toolset when the runtime is closed.
 * @example
 * const files = await createMcpTools({ command: 'npx', args: ['my-mcp-server'] }, { prefix: 'files.' });
 * const runtime = createRuntime({ database: './baton.db', planner, tools: [...files.tools] });
 */
export async function createMcpTools(spec: McpServerSpec, options: McpToolsOptions = {}): Promise<McpToolset> {
  const connection = new McpConnection(spec, options.connectTimeoutMs ?? 30_000);
  try {
    const client = await connection.client();
    const listed: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const server = options.name ?? client.getServerVersion()?.name ?? describeServer(spec);
    const named = [...Object.keys(options.overrides ?? {}), ...(options.include ?? [])];
    const unknown = [...new Set(named.filter((name) => !listed.some((t) => t.name === name)))];
    if (unknown.length > 0) {
      throw new BatonError(
        createFailure(
          'input.invalid',
          `Overrides or include name tools MCP server '${server}' does not have: ${unknown.join(', ')}`,
        ),
      );
    }
    const chosen = options.include ? listed.filter((t) => options.include!.includes(t.name)) : listed;
    // Tasks for tools/call, as the server declared them in `initialize`.
    const tasks = options.tasks !== false && client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
    const skipped = chosen.flatMap((tool) => {
      const reason = uncallable(tool, tasks, options.tasks === false);
      return reason === null ? [] : [{ tool: tool.name, reason }];
    });
    const included = skipped.filter((s) => options.include?.includes(s.tool));
    if (included.length > 0) {
      const list = included.map((s) => `'${s.tool}': ${s.reason}`).join('; ');
      throw new BatonError(
        createFailure('input.invalid', `MCP server '${server}' has tools Baton cannot call: ${list}`),
      );
    }
    const callable = chosen.filter((tool) => !skipped.some((s) => s.tool === tool.name));
    const tools = callable.map((tool) => toBatonTool(connection, server, tool, options, tasks));
    return {
      server,
      tools,
      skipped,
      get connects() {
        return connection.connects;
      },
      close: () => connection.close(),
    };
  } catch (error) {
    await connection.close();
    if (error instanceof BatonError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new BatonError(
      createFailure('mcp.connect_failed', `Cannot use MCP server ${describeServer(spec)}: ${message}`, {
        retryable: true,
      }),
    );
  }
}
