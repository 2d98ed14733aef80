/** Plain-text rendering of runs, steps and tool calls, for `baton runs` and `baton show`. */
import { describeQuestion } from './answer-text.js';
import type { RunJson } from './api-json.js';
import { terminalText } from './terminal-text.js';

function time(ms: number | null | undefined): string {
  return typeof ms === 'number'
    ? new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '-';
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** A table of runs, newest first: id, status, created, input. */
export function toRunsTable(runs: RunJson[]): string {
  if (runs.length === 0) return 'No runs.\n';
  const idWidth = Math.max(...runs.map((r) => r.id.length), 2);
  const lines = [`${pad('ID', idWidth)}  ${pad('STATUS', 13)}  ${pad('CREATED', 20)}  INPUT`];
  for (const run of runs) {
    lines.push(
      `${pad(run.id, idWidth)}  ${pad(run.status, 13)}  ${pad(time(run.created_at), 20)}  ${clip(run.input, 60)}`,
    );
  }
  return terminalText(`${lines.join('\n')}\n`);
}

/** What a waiting run waits on, and the command that decides it. */
function waitOf(run: RunJson): string {
  if (run.pending_input) return `input ${run.pending_input.id} (baton answer ${run.id} <text>)`;
  if (run.child_wait) {
    const asking = run.child_wait.asking;
    const below = asking
      ? `; run ${asking.run_id} waits for ${asking.pending_input ? `input ${asking.pending_input.id}` : `approval ${asking.pending_approval_id}`} (decide it on either run)`
      : '';
    return `child run ${run.child_wait.run_id} (agent ${String(run.child_wait.agent)}, ${run.child_wait.status})${below}`;
  }
  if (run.wait_reason === 'budget') return `approval ${String(run.pending_approval_id)} (baton extend or baton end)`;
  if (run.wait_reason === 'task')
    return `its call's work elsewhere (${String(run.pending_approval_id)}), polled by the runtime`;
  if (run.wait_reason === 'paused')
    return `an operator's pause ${String(run.pending_approval_id)} (baton resume ${run.id})`;
  return `approval ${String(run.pending_approval_id)}`;
}

/** The run's fields, one per line. */
export function toRunDetails(run: RunJson): string {
  const u = run.usage;
  const rows: [string, string][] = [
    ['status', `${run.status}${run.stop_reason ? ` (${run.stop_reason})` : ''}`],
    ['session', run.session_id],
    ...(run.forked_from
      ? [['forked', `from ${run.forked_from.run_id} at step ${run.forked_from.step}`] as [string, string]]
      : []),
    ...(run.parent
      ? [['parent', `${run.parent.run_id} (its call ${run.parent.tool_call_id})`] as [string, string]]
      : []),
    ...(run.children.length > 0
      ? [
          ['children', run.children.map((c) => `${c.run_id} (agent ${String(c.agent)}, ${c.status})`).join(', ')] as [
            string,
            string,
          ],
        ]
      : []),
    ...(run.handoff_stack.length > 0
      ? [
          [
            'handoffs',
            `${run.agent?.name ?? 'its agent'} → ${run.handoff_stack.map((e) => `${e.agent} (step ${e.step})`).join(' → ')}; ${run.handoff_stack.at(-1)!.agent} plans next`,
          ] as [string, string],
        ]
      : []),
    ['input', run.input],
    ...(Object.keys(run.metadata).length > 0 ? [['metadata', JSON.stringify(run.metadata)] as [string, string]] : []),
    ...(run.tags.length > 0 ? [['tags', run.tags.join(', ')] as [string, string]] : []),
    ['answer', run.answer ?? '-'],
    ...(run.failure ? [['failure', `${run.failure.code}: ${run.failure.message}`] as [string, string]] : []),
    ...(run.pending_approval_id
      ? [['waiting', `${run.wait_reason ?? 'approval'}: ${waitOf(run)}`] as [string, string]]
      : []),
    ...(run.pending_input ? [['question', describeQuestion(run.pending_input)] as [string, string]] : []),
    ...(run.pause_requested
      ? [
          [
            'pausing',
            `asked${run.pause_requested.by ? ` by ${run.pause_requested.by}` : ''}${run.pause_requested.reason ? `: ${run.pause_requested.reason}` : ''}; it stops before its next step`,
          ] as [string, string],
        ]
      : []),
    ...(run.start_at
      ? [['starts', `${time(run.start_at)} (started later: queued until then)`] as [string, string]]
      : []),
    ['usage', `${u.steps} steps, ${u.llm_calls} model calls, ${u.tool_calls} tool calls, ${u.tokens} tokens`],
    ['created', time(run.created_at)],
    ['updated', time(run.updated_at)],
  ];
  return terminalText(`Run ${run.id}\n${rows.map(([k, v]) => `  ${pad(k, 8)}  ${v}`).join('\n')}\n`);
}

interface StepLike {
  step_index?: number;
  agent?: string | null;
  decision?: { type?: string; answer?: string; text?: string | null; calls?: { tool?: string }[] };
}

/** One line per planner step: its decision (and the agent that planned it, once a run was handed over). */
export function toStepLines(steps: unknown[]): string {
  if (steps.length === 0) return 'Steps: none\n';
  const handedOver = new Set((steps as StepLike[]).map((step) => step.agent ?? null)).size > 1;
  const lines = (steps as StepLike[]).map((step) => {
    const d = step.decision;
    const what =
      d?.type === 'final'
        ? `final answer: ${clip(d.answer ?? '', 80)}`
        : `${(d?.calls ?? []).map((c) => String(c.tool)).join(', ')}${d?.text ? ` (${clip(d.text, 60)})` : ''}`;
    return `  ${String(step.step_index)}  ${handedOver ? `[${String(step.agent)}] ` : ''}${what}`;
  });
  return terminalText(`Steps:\n${lines.join('\n')}\n`);
}

interface ToolCallLike {
  id?: string;
  step_index?: number;
  tool?: string;
  args?: unknown;
  status?: string;
  attempts?: number;
  started_at?: number | null;
  finished_at?: number | null;
  copied_from?: string | null;
}

/** One line per tool call of the ledger: step, tool, arguments, status, duration. */
export function toToolCallLines(calls: unknown[]): string {
  if (calls.length === 0) return 'Tool calls: none\n';
  const lines = (calls as ToolCallLike[]).map((call) => {
    const took =
      typeof call.started_at === 'number' && typeof call.finished_at === 'number'
        ? ` in ${call.finished_at - call.started_at} ms`
        : '';
    const retries = (call.attempts ?? 1) > 1 ? `, ${call.attempts} attempts` : '';
    // A fork's copy of its source's call: it did not run here.
    const copied = call.copied_from ? ` (copied from ${call.copied_from}, not run here)` : '';
    return `  ${String(call.step_index)}  ${String(call.tool)} ${clip(JSON.stringify(call.args ?? null), 70)} ${String(call.status)}${took}${retries}${copied}`;
  });
  return terminalText(`Tool calls:\n${lines.join('\n')}\n`);
}
