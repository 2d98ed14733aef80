/** What the model sees of a tool call: its observation, read from the call's ledger row. */
import type { ToolCallRow } from '../store/index.js';
import type { ToolResult } from '../tools/tool-result.js';

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
