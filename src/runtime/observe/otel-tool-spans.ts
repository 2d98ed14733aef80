/**
 * The spans of the ledger's calls: `execute_tool` for each tool call, from its `action` to its
 * `result`, and `baton.compensate` for each undoing of a completed call.
 */
import type { RunEventRecord } from '../model/types.js';
import { baseAttributes, writeChildSpan, type EventHandler } from './otel-spans.js';
import { callSpanIds, withRunIds } from './trace-ids.js';

/** `action`: a tool call started; its span is written when its result comes. */
export const onAction: EventHandler = (_deps, _runId, run, event) => {
  run.actions.set(String(event.data.tool_call_id), event);
};

/** `child` started: a call of an agent tool began (its span, the child run's parent, is written at its result). */
export const onChild: EventHandler = (_deps, _runId, run, event) => {
  if (event.data.status === 'started') run.actions.set(String(event.data.tool_call_id), event);
};

/** `result`: the `execute_tool` span of the call, from its start to its result. */
export const onResult: EventHandler = (deps, runId, run, event, emit) => {
  const data = event.data;
  const started = run.actions.get(String(data.tool_call_id));
  run.actions.delete(String(data.tool_call_id));
  if (!emit) return;
  const failure = data.failure as { code?: string } | undefined;
  // The span of a call that started a child run has the id the child's span names as parent.
  const write = (start: () => void) =>
    started?.type === 'child' ? withRunIds(callSpanIds(runId, String(data.tool_call_id)), start) : start();
  write(() =>
    writeChildSpan(
      deps,
      runId,
      `execute_tool ${String(data.tool)}`,
      started?.createdAt ?? event.createdAt,
      event.createdAt,
      {
        ...baseAttributes(runId, run),
        ...toolAttributes(data, started),
        'gen_ai.operation.name': 'execute_tool',
        'baton.step': Number(data.step_index ?? started?.data.step_index ?? stepOfCall(data.tool_call_id)),
        ...(started?.data.risk ? { 'baton.tool.risk': String(started.data.risk) } : {}),
        ...(started?.type === 'child' ? { 'baton.child_run.id': String(started.data.child_run_id) } : {}),
        ...mcpOrigin(started?.data.origin),
        ...(deps.content
          ? {
              'gen_ai.tool.call.arguments': deps.content(started?.data.args),
            }
          : {}),
      },
      failure?.code,
    ),
  );
};

/** `compensation`: undoing a completed call is its own span, from `started` to how it ended. */
export const onCompensation: EventHandler = (deps, runId, run, event, emit) => {
  const data = event.data;
  if (data.status === 'started') {
    run.actions.set(String(data.tool_call_id), event);
    return;
  }
  const started = run.actions.get(String(data.tool_call_id));
  run.actions.delete(String(data.tool_call_id));
  if (!emit || data.status === 'skipped') return;
  const failure = data.failure as { code?: string } | undefined;
  writeChildSpan(
    deps,
    runId,
    `baton.compensate ${String(data.tool)}`,
    started?.createdAt ?? event.createdAt,
    event.createdAt,
    {
      ...baseAttributes(runId, run),
      ...toolAttributes(data, started),
      'baton.compensation.of': String(data.compensates),
    },
    failure?.code,
  );
};

/** The step of a ledger call id (`<run>.s<step>.c<index>`), for events written before they carried it. */
function stepOfCall(callId: unknown): number {
  const match = /\.s(\d+)\.c\d+$/.exec(String(callId));
  return match ? Number(match[1]) : 0;
}

/** An MCP tool's server and name on it, as span attributes (nothing for other tools). */
function mcpOrigin(origin: unknown): Record<string, string> {
  const o = origin as { kind?: unknown; server?: unknown; tool?: unknown } | undefined;
  if (o?.kind !== 'mcp') return {};
  return { 'baton.mcp.server': String(o.server), 'baton.mcp.tool': String(o.tool) };
}

/** What a tool call's span and a compensation's span both say: the tool, the ledger id, how it ended, its effect and attempt. */
function toolAttributes(
  data: Record<string, unknown>,
  started: RunEventRecord | undefined,
): Record<string, string | number> {
  return {
    'gen_ai.tool.name': String(data.tool),
    'gen_ai.tool.call.id': String(data.tool_call_id),
    'baton.tool.outcome': String(data.status),
    ...(started?.data.effect ? { 'baton.tool.effect': String(started.data.effect) } : {}),
    ...(started?.data.attempt ? { 'baton.tool.attempt': Number(started.data.attempt) } : {}),
  };
}
