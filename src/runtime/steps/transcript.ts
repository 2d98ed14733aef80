/** What the model sees of a tool call: its observation, read from the call's ledger row. */
import type { ToolCallRow } from '../../store/index.js';
import type { ToolImageRef } from '../../tools/tool-images.js';
import type { ToolResult } from '../../tools/tool-result.js';

/** The images a tool call returned, as its result names them. */
export function imagesOf(row: ToolCallRow): ToolImageRef[] {
  if (!row.result) return [];
  return (JSON.parse(row.result) as ToolResult).images ?? [];
}

/** What a person did to a call, as the model is told before its result. */
function humanNote(row: ToolCallRow, result: ToolResult): string | null {
  if (result.given === 'answer') return `Answer from ${result.recordedBy ?? 'a person'}:`;
  if (result.given === 'response') {
    return `Not run: ${result.recordedBy ?? 'a person'} gave this result for '${row.tool}' instead:`;
  }
  if (!row.edited) return null;
  const edited = JSON.parse(row.edited) as { by: string | null; reason: string | null };
  return `${edited.by ?? 'A person'} edited the arguments before approving${edited.reason ? ` (${edited.reason})` : ''}; the call ran with ${row.args}:`;
}

/** The text the model sees for one tool call. */
export function toObservation(row: ToolCallRow): string {
  if (!row.result) return `Tool '${row.tool}' has no result (status ${row.status}).`;
  const result = JSON.parse(row.result) as ToolResult;
  const note = humanNote(row, result);
  const observation = describe(result);
  return note ? `${note}\n${observation}` : observation;
}

function describe(result: ToolResult): string {
  if (result.status === 'ok') {
    const text = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
    const lines = [
      result.truncated && result.artifact
        ? `${text}\n[truncated: ${result.artifact.size} bytes in total, stored as artifact sha256:${result.artifact.sha256}]`
        : text,
    ];
    // Named here for every model; one that accepts images is also given them (see the planner).
    for (const image of result.images ?? []) {
      lines.push(`[image: ${image.mediaType}, ${image.size} bytes, stored as artifact sha256:${image.sha256}]`);
    }
    return lines.filter((line) => line !== '').join('\n');
  }
  const failure = result.failure;
  const issues = failure?.details?.issues as { path: (string | number)[]; message: string }[] | undefined;
  const lines = [`Error ${failure?.code ?? 'tool.failed'}: ${String(result.content)}`];
  if (issues) for (const issue of issues) lines.push(`- ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  if (result.retryable) lines.push('This call may succeed if retried.');
  return lines.join('\n');
}
