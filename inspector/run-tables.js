// @ts-check
/**
 * A run's tables: the event timeline (payloads on demand, crash recoveries marked), the steps
 * with their decisions and context reports, the tool-call ledger, and the trace as a waterfall.
 */
import { h, fill } from './dom.js';
import { CAUSE_LABELS, RECOVERY_LABELS } from './fold.js';
import { brief, clock, count, duration, pretty } from './format.js';
import { editedMark } from './run-edit.js';

/** Why a call waits at a limit (a `throttled` event's `limit`). */
const THROTTLE_LABELS = {
  concurrency: 'all slots of its limit taken',
  rate: 'no turn of its rate left',
  backoff: 'its service said 429, backing off',
};
/** @typedef {import('./types.js').EventJson} EventJson */
/** @typedef {import('./types.js').FoldCall} FoldCall */

/** How each compensation status reads. */
const COMPENSATION_LABELS = /** @type {const} */ ({
  started: 'started',
  succeeded: 'undone',
  failed: 'failed, not undone',
  unknown: 'outcome unknown',
  skipped: 'left as it is',
});

/** A finished compensation in a few words. @param {any} c */
function compensationSummary(c) {
  const parts = [`${(c.compensated ?? []).length} undone`];
  if ((c.failed ?? []).length > 0) parts.push(`${c.failed.length} failed`);
  if ((c.not_compensated ?? []).length > 0) parts.push(`${c.not_compensated.length} left as they are`);
  return `compensation: ${parts.join(', ')}`;
}

/** One line saying what an event did. @param {EventJson} event */
export function summarize(event) {
  const d = /** @type {Record<string, any>} */ (event.data);
  switch (event.type) {
    case 'run.created':
      return `created: ${brief(d.input, 100)}${d.forked_from ? ` — forked from ${d.forked_from.run_id} at step ${d.forked_from.step} (${d.copied?.events ?? 0} events copied)` : ''}`;
    case 'state':
      return `${d.from} → ${d.to}${d.stop_reason ? ` (${d.stop_reason})` : ''}${d.wait_reason ? ` (${d.wait_reason})` : ''}${d.compensation ? ` — ${compensationSummary(d.compensation)}` : ''}`;
    case 'child':
      return d.status === 'started'
        ? `handed ${d.tool} to agent ${d.agent}: child run ${d.child_run_id}`
        : `child run ${d.child_run_id} (agent ${d.agent}) ${d.status}${d.failure ? `: ${d.failure.message}` : ''}`;
    case 'progress':
      return `${d.tool} under way${typeof d.progress === 'number' ? ` ${d.progress}${typeof d.total === 'number' ? `/${d.total}` : ''}` : ''}${d.message ? `: ${d.message}` : ''}`;
    case 'task':
      return d.status === 'waiting'
        ? `${d.tool} goes on elsewhere: the run waits for it (next poll ${new Date(d.poll_at).toISOString().slice(11, 19)})`
        : `${d.tool}'s work elsewhere ended: ${d.status}${d.failure ? `: ${d.failure.message}` : ''}`;
    case 'handoff':
      return `${d.direction === 'back' ? 'handed back' : 'handed over'}: ${d.from} → ${d.to}${d.reason ? ` (${d.reason})` : ''}; ${d.to} plans next`;
    case 'compensation':
      return `undo ${d.tool} (call ${String(d.compensates)}): ${COMPENSATION_LABELS[/** @type {keyof typeof COMPENSATION_LABELS} */ (d.status)] ?? d.status}${d.reason ? ` — ${d.reason === 'no_compensator' ? 'it has no compensator' : 'its outcome is unknown, a human must check it'}` : ''}${d.attempt > 1 ? ` (attempt ${d.attempt})` : ''}${d.failure ? `: ${d.failure.message}` : ''}`;
    case 'step': {
      const decision = d.decision ?? {};
      const what = decision.type === 'final' ? 'final answer' : (decision.tools ?? []).join(', ');
      return `step ${d.step_index}${d.handoff_depth > 0 ? ` [${d.agent}]` : ''}: ${what}${decision.text ? ` — ${decision.text}` : ''}${d.given_by !== undefined ? ` (given by ${d.given_by ?? 'the caller'} when the run was forked)` : ''}`;
    }
    case 'action':
      return `run ${d.tool} ${brief(d.args, 80)}${d.attempt > 1 ? ` (attempt ${d.attempt})` : ''}`;
    case 'result':
      return `${d.tool} ${d.status}${d.duration_ms !== undefined ? ` in ${duration(d.duration_ms)}` : ''}${d.failure ? `: ${d.failure.message}` : ''}${d.status === 'unknown' && d.cause in CAUSE_LABELS ? ` (outcome unknown: ${CAUSE_LABELS[/** @type {keyof typeof CAUSE_LABELS} */ (d.cause)]})` : ''}`;
    case 'input_request':
      return `question for a person${d.from ? ` from ${d.from.server ? `MCP server ${d.from.server} (${d.from.tool})` : d.from.tool}${d.from.in_flight ? ', the call waits open' : ', the call stopped'}` : ''} (role ${d.role ?? 'approve'}): ${brief(d.question, 100)}`;
    case 'input_result':
      return d.decision === 'expired'
        ? `expired unanswered: ${d.reason ?? ''}`
        : d.decision === 'closed'
          ? `closed unanswered: ${d.reason ?? ''}`
          : d.declined
            ? `declined by ${d.by}`
            : `answered by ${d.by}: ${brief(d.answer, 80)}`;
    case 'throttled':
      return `${d.tool ? `${d.tool} waits` : 'the planner waits'}: ${THROTTLE_LABELS[/** @type {keyof typeof THROTTLE_LABELS} */ (d.limit)] ?? d.limit}${d.key ? ` for key ${d.key}` : ''}${d.retry_in_ms === null ? ' (the call is not tried again)' : d.retry_in_ms ? ` (asks again in ${duration(d.retry_in_ms)})` : ''}`;
    case 'pause':
      return `pause asked${d.by ? ` by ${d.by}` : ''}${d.reason ? `: ${d.reason}` : ''}: the run stops before its next step`;
    case 'approval_request':
      if (d.reason === 'paused')
        return `paused${d.pause?.by ? ` by ${d.pause.by}` : ''}${d.pause?.reason ? `: ${d.pause.reason}` : ''}, until resumed (it goes on ${d.pause?.resume === 'executing' ? 'with the step it planned' : 'planning its next step'})`;
      if (d.reason === 'budget') return `budget ran out: ${d.budget} at step ${d.step_index}, a human decides`;
      return `${d.reason === 'policy' ? `escalated by a policy to the role ${d.role}` : d.reason === 'uncertain_side_effect' ? 'outcome unknown, a human decides' : d.reason === 'tool_version_mismatch' ? 'tool version changed, a human decides' : d.reason === 'repeat_effect' ? `would repeat call ${d.source?.tool_call_id ?? '?'} of the source run, a human decides` : 'approval needed'}: ${(d.tool_calls ?? []).map((/** @type {any} */ c) => `${c.tool} ${c.recorded_version ? `v${c.recorded_version} → v${c.version} ` : ''}${brief(c.args, 60)}`).join(', ')}`;
    case 'approval_result':
      if (d.decision === 'escalated') return `escalated from the role ${d.from_role} to ${d.role}`;
      if (d.action === 'resume') return `resumed by ${d.by}${d.reason ? `: ${d.reason}` : ''}`;
      return `${d.decision}${d.action ? ` (${d.action})` : ''} by ${d.by}${d.reason ? `: ${d.reason}` : ''}`;
    case 'artifact':
      return `artifact ${String(d.sha256).slice(0, 12)}… (${count(d.size)} bytes)`;
    default:
      return brief(d, 100);
  }
}

/**
 * One timeline row (and its hidden payload row).
 * @param {EventJson} event
 * @param {number} start the run's first event time
 * @param {boolean} resumed true when the run was picked up again here after its process stopped
 * @param {(stepIndex: number) => HTMLElement | null} [forkFor] the fork control of a step (on its `step` row)
 * @returns {HTMLTableRowElement[]}
 */
export function timelineRows(event, start, resumed, forkFor) {
  const recovery = /** @type {string | undefined} */ (event.data.recovery);
  const payload = h(
    'tr',
    { class: 'payload', hidden: true },
    h('td', { colspan: 4 }, h('pre', {}, pretty(event.data))),
  );
  const toggle = h('button', { type: 'button', class: 'link', 'aria-label': `Payload of event ${event.seq}` }, '{…}');
  toggle.addEventListener('click', () => (payload.hidden = !payload.hidden));
  const rows = [];
  if (resumed) {
    rows.push(
      h(
        'tr',
        { class: 'resumed', 'data-resumed-at': event.seq },
        h('td', { colspan: 4 }, '⟲ Resumed after the process stopped: the interrupted call was resolved as below'),
      ),
    );
  }
  rows.push(
    h(
      'tr',
      { 'data-seq': event.seq, 'data-type': event.type, class: `event ${event.type.replace('.', '-')}` },
      h('td', { class: 'num mono' }, event.seq),
      h('td', { class: 'mono' }, event.type),
      h(
        'td',
        { class: 'mono', title: new Date(event.created_at).toISOString() },
        clock(event.created_at),
        h('span', { class: 'muted' }, ` +${duration(event.created_at - start)}`),
      ),
      h(
        'td',
        {},
        summarize(event),
        recovery && recovery in RECOVERY_LABELS
          ? h(
              'span',
              { class: `recovery ${recovery}`, 'data-recovery': recovery },
              RECOVERY_LABELS[/** @type {keyof typeof RECOVERY_LABELS} */ (recovery)],
              typeof event.data.cause === 'string' && event.data.cause in CAUSE_LABELS
                ? ` (${CAUSE_LABELS[/** @type {keyof typeof CAUSE_LABELS} */ (event.data.cause)]})`
                : '',
            )
          : null,
        ' ',
        toggle,
        event.type === 'step' && forkFor ? forkFor(Number(event.data.step_index)) : null,
      ),
    ),
    payload,
  );
  return rows;
}

/**
 * The ledger: one row per tool call.
 * @param {HTMLElement} body a tbody
 * @param {(FoldCall & { result?: unknown, artifact?: string | null, edited?: import('./types.js').ToolCallJson['edited'] })[]} calls
 */
export function renderLedger(body, calls) {
  fill(
    body,
    ...(calls.length === 0
      ? [h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No tool calls yet.'))]
      : calls.map((call) =>
          h(
            'tr',
            { 'data-call': call.id, 'data-status': call.status },
            h('td', { class: 'mono' }, call.tool),
            h('td', {}, call.effect ?? '—'),
            h('td', {}, call.risk ?? '—'),
            h('td', { class: 'mono args' }, brief(call.args, 160), editedMark(call.edited, call.args)),
            h(
              'td',
              {},
              h('span', { class: `badge ${call.status}` }, call.status),
              call.compensation
                ? h(
                    'span',
                    { class: 'compensation', 'data-compensation': call.compensation },
                    ` undo: ${COMPENSATION_LABELS[/** @type {keyof typeof COMPENSATION_LABELS} */ (call.compensation)] ?? call.compensation}`,
                  )
                : null,
            ),
            h('td', { class: 'num' }, call.attempts),
            h(
              'td',
              { class: 'mono' },
              call.artifact ? h('span', { class: 'artifact' }, `artifact ${call.artifact.slice(0, 12)}… `) : null,
              call.failure
                ? `${call.failure.code}: ${call.failure.message}`
                : call.result !== undefined
                  ? brief(call.result, 160)
                  : call.ok === null
                    ? ''
                    : call.ok
                      ? 'ok'
                      : 'failed',
            ),
            h(
              'td',
              {},
              ...call.recovery.map((how) =>
                h('span', { class: `recovery ${how}`, 'data-recovery': how }, RECOVERY_LABELS[how]),
              ),
            ),
          ),
        )),
  );
}

/**
 * The steps: decision, usage and what the context builder gave the planner.
 * @param {HTMLElement} root
 * @param {import('./types.js').StepJson[]} steps
 * @param {(stepIndex: number) => HTMLElement | null} [forkFor] the fork control of a step
 */
export function renderSteps(root, steps, forkFor) {
  // A journaled step never changes: only new ones are added, so a fork form being edited stays.
  const shown = root.querySelectorAll('details.step').length;
  if (shown > 0 && steps.length >= shown) {
    root.append(...steps.slice(shown).map((step) => stepElement(step, forkFor)));
    return;
  }
  fill(
    root,
    ...(steps.length === 0
      ? [h('p', { class: 'muted' }, 'No steps yet.')]
      : steps.map((step) => stepElement(step, forkFor))),
  );
}

/**
 * One step: the agent that planned it, its decision, its context report, and a way to fork the run from it.
 * @param {{ step_index: number, decision: unknown, usage: unknown, context: unknown, agent?: string | null, memory_version?: number | null }} step
 * @param {(stepIndex: number) => HTMLElement | null} [forkFor]
 */
function stepElement(step, forkFor) {
  const decision = /** @type {Record<string, any>} */ (step.decision);
  const calls = decision.type === 'tool_calls' ? (decision.calls ?? []) : [];
  return h(
    'details',
    { class: 'step', 'data-step': step.step_index },
    h(
      'summary',
      {},
      h('strong', {}, `Step ${step.step_index}`),
      ' ',
      step.agent
        ? h('span', { class: 'badge agent', 'data-agent': step.agent, title: 'The agent that planned it' }, step.agent)
        : null,
      step.agent ? ' ' : null,
      typeof step.memory_version === 'number'
        ? h(
            'span',
            {
              class: 'badge memory',
              'data-memory-version': step.memory_version,
              title: 'The memory version its planner read',
            },
            `memory v${step.memory_version}`,
          )
        : null,
      typeof step.memory_version === 'number' ? ' ' : null,
      decision.type === 'final'
        ? h('span', {}, 'final answer: ', h('q', {}, String(decision.answer ?? '')))
        : h(
            'span',
            { class: 'mono' },
            calls.map((/** @type {any} */ c) => `${c.tool} ${brief(c.args, 60)}`).join(' · '),
          ),
      h('span', { class: 'muted' }, ` · ${brief(step.usage, 120)}`),
    ),
    decision.text ? h('p', {}, decision.text) : null,
    h('h4', {}, 'Decision'),
    h('pre', {}, pretty(decision)),
    h('h4', {}, 'Context report'),
    h('pre', {}, step.context ? pretty(step.context) : 'none recorded'),
    forkFor ? forkFor(step.step_index) : null,
  );
}

/**
 * The trace as a waterfall: each span a bar placed on the run's time axis.
 * @param {HTMLElement} root
 * @param {import('./types.js').SpanJson[]} spans
 */
export function renderTrace(root, spans) {
  if (spans.length === 0) return fill(root, h('p', { class: 'muted' }, 'No spans yet.'));
  const start = Math.min(...spans.map((span) => span.started_at));
  const now = Date.now();
  const end = Math.max(start + 1, ...spans.map((span) => span.ended_at ?? now));
  const total = end - start;
  return fill(
    root,
    h('div', { class: 'waterfall-axis muted' }, `0 ms`, h('span', {}, duration(total))),
    ...spans.map((span) => {
      const bar = h('div', { class: `bar ${span.kind}${span.ended_at === null ? ' open' : ''}` });
      // Geometry is set through the CSSOM, which the Content-Security-Policy allows (inline styles it does not).
      bar.style.left = `${(((span.started_at - start) / total) * 100).toFixed(3)}%`;
      bar.style.width = `${Math.max(0.4, (((span.ended_at ?? now) - span.started_at) / total) * 100).toFixed(3)}%`;
      const usage = /** @type {Record<string, any> | undefined} */ (span.attributes.usage);
      const tokens = usage
        ? (usage.input_tokens ?? usage.inputTokens ?? 0) + (usage.output_tokens ?? usage.outputTokens ?? 0)
        : null;
      return h(
        'div',
        { class: 'span-row', 'data-kind': span.kind, title: pretty(span.attributes) },
        h('div', { class: 'span-name mono' }, span.name),
        h('div', { class: 'span-track' }, bar),
        h(
          'div',
          { class: 'span-meta num' },
          span.duration_ms === null ? 'open' : duration(span.duration_ms),
          tokens !== null ? ` · ${count(tokens)} tok` : '',
        ),
      );
    }),
  );
}

/**
 * The scrubber and what it says: following live, or replaying the run at `replaySeq` (the
 * timeline's later rows dimmed, the one at that seq marked).
 * @param {{ scrubber: HTMLInputElement, live: HTMLButtonElement, replayInfo: HTMLElement, timeline: HTMLElement }} el
 * @param {number} last the seq of the last event on the page
 * @param {number | null} replaySeq null while following live
 * @param {string} status the status of the state on screen
 */
export function renderReplay(el, last, replaySeq, status) {
  el.scrubber.max = String(last);
  el.scrubber.value = String(replaySeq ?? last);
  el.live.disabled = replaySeq === null;
  fill(
    el.replayInfo,
    replaySeq === null
      ? `live · ${last} events`
      : `replaying seq ${replaySeq} of ${last} (read-only, from stored events): ${status}`,
  );
  el.replayInfo.dataset.state = status;
  el.replayInfo.dataset.seq = String(replaySeq ?? last);
  for (const row of el.timeline.querySelectorAll('tr.event')) {
    const seq = Number(/** @type {HTMLElement} */ (row).dataset.seq);
    row.classList.toggle('future', replaySeq !== null && seq > replaySeq);
    row.classList.toggle('at', replaySeq !== null && seq === replaySeq);
  }
}
