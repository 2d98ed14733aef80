/**
 * The context builder: the session's committed history, this run's input, and for each past
 * step the planner's decision and one observation per tool call, read from the ledger.
 */
import type { PlannerMessage } from '../planner/types.js';
import type { MessageRow, ToolCallRow } from '../store/index.js';
import type { ToolResult } from '../tools/tool-result.js';
import { toolCallId } from './ids.js';
import type { RunMemory } from './run-memory.js';

/** The text the model sees for one tool call. */
export function toObservation(row: ToolCallRow): string {
  if (!row.result) return `Tool '${row.tool}' has no result (status ${row.status}).`;
  const result = JSON.parse(row.result) as ToolResult;
  if (result.status === 'ok') {
    const text = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
    return result.truncated && result.artifact
      ? `${text}\n[truncated: ${result.artifact.size} bytes in total, stored as artifact sha256:${result.artifact.sha256}]`
      : text;
  }
  const failure = result.failure;
  const issues = failure?.details?.issues as { path: (string | number)[]; message: string }[] | undefined;
  const lines = [`Error ${failure?.code ?? 'tool.failed'}: ${String(result.content)}`];
  if (issues) for (const issue of issues) lines.push(`- ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  if (result.retryable) lines.push('This call may succeed if retried.');
  return lines.join('\n');
}

/** Builds the messages for step `stepIndex` of a run from the session history and the run's memory. */
export function buildMessages(
  history: MessageRow[],
  run: { id: string; input: string },
  stepIndex: number,
  memory: RunMemory,
): PlannerMessage[] {
  const messages: PlannerMessage[] = [];
  for (const m of history) {
    if (m.run_id === run.id) continue;
    messages.push(
      m.role === 'assistant' ? { role: 'assistant', content: m.content } : { role: 'user', content: m.content },
    );
  }
  messages.push({ role: 'user', content: run.input });
  for (let step = 0; step < stepIndex; step += 1) {
    const decision = memory.journal.get(step)?.decision;
    if (!decision || decision.type !== 'tool_calls') continue;
    const calls = decision.calls.map((call, index) => ({ id: toolCallId(run.id, step, index), ...call }));
    messages.push({ role: 'assistant', content: decision.text ?? '', toolCalls: calls });
    for (const call of calls) {
      const row = memory.ledger.get(call.id);
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        tool: call.tool,
        content: row ? toObservation(row) : 'Not run.',
      });
    }
  }
  return messages;
}
