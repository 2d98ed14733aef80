/** Plain-text rendering of run events: one line per event, prefixed with its `seq`. */
import type { RunEventRecord } from '../index.js';
import { terminalText } from './terminal-text.js';

/** What a line is made of: a runtime event or an API event (`EventJson`) alike. */
export type EventLike = Pick<RunEventRecord, 'seq' | 'type' | 'data'>;

function args(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

function describe(event: EventLike): string {
  const data = event.data;
  switch (event.type) {
    case 'run.created':
      return `run created: ${String(data.input)}`;
    case 'state': {
      const failure = data.failure as { code?: string; message?: string } | undefined;
      const notes = [
        data.wait_reason ? `waiting for ${data.wait_reason === 'approval' ? 'approval' : 'a human'}` : '',
        data.stop_reason ? `stop reason ${String(data.stop_reason)}` : '',
        failure ? `${failure.code}: ${failure.message}` : '',
      ].filter(Boolean);
      return `${String(data.from)} → ${String(data.to)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
    }
    case 'step': {
      const decision = data.decision as { type?: string; tools?: string[]; text?: string | null } | undefined;
      if (decision?.type === 'final') return `step ${String(data.step_index)}: final answer`;
      const text = decision?.text ? ` (${decision.text})` : '';
      return `step ${String(data.step_index)}: ${(decision?.tools ?? []).join(', ')}${text}`;
    }
    case 'action':
      return `  run ${String(data.tool)} ${args(data.args)}`;
    case 'result': {
      const failure = data.failure as { message?: string } | undefined;
      const took = typeof data.duration_ms === 'number' ? ` in ${data.duration_ms} ms` : '';
      return `  ${String(data.tool)} ${String(data.status)}${took}${failure?.message ? `: ${failure.message}` : ''}`;
    }
    case 'approval_request': {
      const calls = (data.tool_calls as { tool?: string; args?: unknown }[] | undefined) ?? [];
      return `approval needed: ${calls.map((c) => `${String(c.tool)} ${args(c.args)}`).join(', ')}`;
    }
    case 'approval_result':
      return `approval ${String(data.decision)} by ${String(data.by)}${data.reason ? `: ${String(data.reason)}` : ''}`;
    case 'artifact':
      return `artifact sha256:${String(data.sha256)} (${String(data.size)} bytes)`;
    case 'error':
      return `error: ${args(data)}`;
    case 'draft':
      return `draft: ${String(data.text)}`;
  }
  // Events of a newer runtime still get a line.
  return `${String((event as { type: unknown }).type)} ${args(data)}`;
}

/** One readable line for an event, e.g. `[3] planning → executing`. */
export function toEventLine(event: EventLike): string {
  return `[${event.seq}] ${terminalText(describe(event), { oneLine: true })}`;
}
