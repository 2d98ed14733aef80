/** Plain-text rendering of run events: one line per event, prefixed with its `seq`. */
import type { RunEventRecord } from '../index.js';
import { terminalText } from './terminal-text.js';

/** Why a call waits at a limit (a `throttled` event's `limit`). */
const THROTTLE_REASONS: Record<string, string> = {
  concurrency: 'every slot of its limit taken',
  rate: 'no turn of its rate left',
  backoff: 'its service said 429, backing off',
};
/** What a line is made of: a runtime event or an API event (`EventJson`) alike. */
export type EventLike = Pick<RunEventRecord, 'seq' | 'type' | 'data'>;

function args(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

/** What a run waits for, by wait reason, in a `state` line. */
const WAITING_FOR: Record<string, string> = {
  approval: 'approval',
  input: 'an answer',
  budget: 'more budget',
  policy: 'an escalated approval',
  child: 'its child run',
  task: 'its work elsewhere to end',
  paused: 'an operator to resume it (paused)',
};

/** What the person gave with a decision, in a few words. */
const ACTIONS: Record<string, string> = {
  edit: 'with edited arguments',
  respond: 'with a result given in place of the call',
  extend: 'with new limits',
  end: 'the run ends',
};

function approvalResult(data: Record<string, unknown>): string {
  if (data.decision === 'escalated') return `approval escalated from ${String(data.from_role)} to ${String(data.role)}`;
  if (data.decision === 'expired') return `approval expired (${String(data.outcome)})`;
  if (data.action === 'resume') return `resumed by ${String(data.by)}${data.reason ? `: ${String(data.reason)}` : ''}`;
  const action = typeof data.action === 'string' && ACTIONS[data.action] ? ` (${ACTIONS[data.action]})` : '';
  return `approval ${String(data.decision)}${action} by ${String(data.by)}${data.reason ? `: ${String(data.reason)}` : ''}`;
}

function describe(event: EventLike): string {
  const data = event.data;
  switch (event.type) {
    case 'run.created':
      return `run created: ${String(data.input)}`;
    case 'state': {
      const failure = data.failure as { code?: string; message?: string } | undefined;
      const notes = [
        data.wait_reason ? `waiting for ${WAITING_FOR[String(data.wait_reason)] ?? 'a human'}` : '',
        data.stop_reason ? `stop reason ${String(data.stop_reason)}` : '',
        failure ? `${failure.code}: ${failure.message}` : '',
      ].filter(Boolean);
      return `${String(data.from)} → ${String(data.to)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
    }
    case 'step': {
      const decision = data.decision as { type?: string; tools?: string[]; text?: string | null } | undefined;
      // The planning agent is named once a run's conversation was handed to another (not its own).
      const by =
        typeof data.agent === 'string' && typeof data.handoff_depth === 'number' && data.handoff_depth > 0
          ? ` [${data.agent}]`
          : '';
      if (decision?.type === 'final') return `step ${String(data.step_index)}${by}: final answer`;
      const text = decision?.text ? ` (${decision.text})` : '';
      return `step ${String(data.step_index)}${by}: ${(decision?.tools ?? []).join(', ')}${text}`;
    }
    case 'action':
      return `  run ${String(data.tool)} ${args(data.args)}`;
    case 'result': {
      const failure = data.failure as { message?: string } | undefined;
      const took = typeof data.duration_ms === 'number' ? ` in ${data.duration_ms} ms` : '';
      return `  ${String(data.tool)} ${String(data.status)}${took}${failure?.message ? `: ${failure.message}` : ''}`;
    }
    case 'throttled': {
      const who = typeof data.tool === 'string' ? data.tool : 'the planner';
      const why = THROTTLE_REASONS[String(data.limit)] ?? String(data.limit);
      const key = data.key ? ` (key ${String(data.key)})` : '';
      const again =
        data.retry_in_ms === null ? 'the call is not tried again' : `asks again in ${String(data.retry_in_ms)} ms`;
      return `  ${who} waits: ${why}${key}, ${again}`;
    }
    case 'pause':
      return `pause asked${data.by ? ` by ${String(data.by)}` : ''}${data.reason ? `: ${String(data.reason)}` : ''} (the run stops before its next step)`;
    case 'approval_request': {
      if (data.reason === 'paused') {
        const pause = (data.pause ?? {}) as { by?: string | null; reason?: string | null };
        return `paused before step ${String(data.step_index)}${pause.by ? ` by ${pause.by}` : ''}${pause.reason ? `: ${pause.reason}` : ''} (resume it to go on)`;
      }
      if (data.reason === 'budget') {
        return `budget ${String(data.budget)} ran out at step ${String(data.step_index)}: extend it or end the run`;
      }
      const calls = (data.tool_calls as { tool?: string; args?: unknown }[] | undefined) ?? [];
      const role = data.role && data.role !== 'approve' ? ` (by ${String(data.role)})` : '';
      return `approval needed${role}: ${calls.map((c) => `${String(c.tool)} ${args(c.args)}`).join(', ')}`;
    }
    case 'approval_result':
      return approvalResult(data);
    case 'input_request': {
      const choices = Array.isArray(data.choices) ? ` [${(data.choices as unknown[]).map(String).join(' | ')}]` : '';
      return `question: ${String(data.question)}${choices}`;
    }
    case 'input_result':
      if (data.decision === 'expired') return `question expired (${String(data.outcome)})`;
      if (data.declined)
        return `question declined by ${String(data.by)}${data.reason ? `: ${String(data.reason)}` : ''}`;
      return `answered by ${String(data.by)}: ${args(data.answer)}`;
    case 'artifact':
      return `artifact sha256:${String(data.sha256)} (${String(data.size)} bytes)`;
    case 'error':
      return `error: ${args(data)}`;
    case 'draft':
      return `draft: ${String(data.text)}`;
    case 'progress': {
      const count =
        typeof data.progress === 'number'
          ? ` ${data.progress}${typeof data.total === 'number' ? `/${data.total}` : ''}`
          : '';
      return `  ${String(data.tool)}${count}${data.message ? `: ${String(data.message)}` : ''}`;
    }
    case 'handoff': {
      const why = typeof data.reason === 'string' && data.reason ? `: ${data.reason}` : '';
      return data.direction === 'back'
        ? `  ${String(data.from)} hands back to ${String(data.to)}${why}`
        : `  ${String(data.from)} hands over to ${String(data.to)}${why}`;
    }
    case 'task': {
      if (data.status === 'waiting') return `  ${String(data.tool)} goes on elsewhere: the run waits for it`;
      const failure = data.failure as { message?: string } | undefined;
      return `  ${String(data.tool)}'s work elsewhere ended: ${String(data.status)}${failure?.message ? `: ${failure.message}` : ''}`;
    }
    case 'child': {
      const who = `agent ${String(data.agent)} (run ${String(data.child_run_id)})`;
      if (data.status === 'started') return `  hand ${String(data.tool)} to ${who}`;
      const failure = data.failure as { message?: string } | undefined;
      return `  ${who} ${String(data.status)}${failure?.message ? `: ${failure.message}` : ''}`;
    }
  }
  // Events of a newer runtime still get a line.
  return `${String((event as { type: unknown }).type)} ${args(data)}`;
}

/** One readable line for an event, e.g. `[3] planning → executing`. */
export function toEventLine(event: EventLike): string {
  return `[${event.seq}] ${terminalText(describe(event), { oneLine: true })}`;
}
