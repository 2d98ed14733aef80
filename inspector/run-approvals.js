// @ts-check
/**
 * A run's pending wait and the decisions made. A step's approval shows the exact calls it is
 * bound to, each call's arguments editable (approve with edits, or respond as the tool), and the
 * buttons; an uncertain call or a changed tool version its own three or four; a question its
 * form (`run-human.js`); a budget that ran out its limits; an operator's pause who paused it and
 * a Resume button. Every wait says the role it needs and
 * when it expires. The pending part is built once per wait and kept across redraws, so what a
 * person is typing is not wiped out by the next event.
 */
import { post } from './api.js';
import { h, fill } from './dom.js';
import { brief, pretty } from './format.js';
import { showError } from './notices.js';
import { callEditor, decidedEdits } from './run-edit.js';
import { decidedDetail, renderBudget, renderQuestion, waitTerms } from './run-human.js';

/** @typedef {import('./types.js').FoldState} FoldState */
/** @typedef {import('./types.js').FoldApproval} FoldApproval */
/** @typedef {import('./types.js').ApprovalJson} ApprovalJson */
/** @typedef {import('./types.js').ToolCallJson} ToolCallJson */
/**
 * @typedef {{
 *   live: boolean,
 *   decide: (approvalId: string, body: Record<string, unknown>) => Promise<void>,
 *   answer: (inputId: string, body: Record<string, unknown>) => Promise<void>,
 *   resume: (body: Record<string, unknown>) => Promise<void>,
 *   errors: HTMLElement,
 * }} Actions
 */

/**
 * The requests of a run's decisions: a decision on a wait, the answer to a question; each
 * reloads the view once the API took it. A refusal is thrown to the wait's panel, which shows it
 * next to what was sent.
 * @param {string} runId
 * @param {() => Promise<unknown>} refresh
 */
export function decisionRequests(runId, refresh) {
  const run = `/v1/runs/${encodeURIComponent(runId)}`;
  return {
    /** @param {string} approvalId @param {Record<string, unknown>} body */
    decide: async (approvalId, body) => {
      await post(`${run}/approvals/${encodeURIComponent(approvalId)}`, body);
      await refresh();
    },
    /** @param {string} inputId @param {Record<string, unknown>} body */
    answer: async (inputId, body) => {
      await post(`${run}/inputs/${encodeURIComponent(inputId)}`, body);
      await refresh();
    },
    /** Lets a paused run go on (`POST …/resume`, the role that pauses). @param {Record<string, unknown>} body */
    resume: async (body) => {
      await post(`${run}/resume`, body);
      await refresh();
    },
  };
}

/**
 * Per root: its two slots (the pending wait, the decisions) and the pending wait on screen with
 * the key it was built for; it is rebuilt, and its slot refilled, only when that wait changes.
 * @type {WeakMap<HTMLElement, { slots: { pending: HTMLElement, decided: HTMLElement }, key: string, box: HTMLElement | null }>}
 */
const kept = new WeakMap();

/** @param {HTMLElement} root */
function keptOf(root) {
  let entry = kept.get(root);
  if (!entry || entry.slots.pending.parentNode !== root) {
    const slots = { pending: h('div', { class: 'pending-slot' }), decided: h('div', { class: 'decided-slot' }) };
    fill(root, slots.pending, slots.decided);
    entry = { slots, key: '', box: null };
    kept.set(root, entry);
  }
  return entry;
}

/**
 * Sends a decision with the reason typed (if any); while it is on its way every button of the
 * wait is disabled. A refusal is shown in `errors`, with the issues the API named.
 * @param {HTMLElement} box the pending wait's element
 * @param {() => Promise<void>} send
 * @param {HTMLElement} errors
 */
function sending(box, send, errors) {
  const buttons = [...box.querySelectorAll('button')];
  for (const button of buttons) button.disabled = true;
  fill(errors);
  void send()
    .catch((error) => showIssues(error, errors))
    .finally(() => {
      for (const button of buttons) button.disabled = false;
      // "Approve with edits" stays disabled until the arguments differ: its editor says so again.
      for (const edit of box.querySelectorAll('[data-testid=edit-args]')) edit.dispatchEvent(new Event('input'));
    });
}

/** An API error with each issue it names (`path: message`). @param {unknown} error @param {HTMLElement} where */
function showIssues(error, where) {
  const notice = showError(error, where);
  const failure = /** @type {{ failure?: { details?: { issues?: { path?: unknown[], message?: string }[] } } }} */ (
    error
  ).failure;
  const issues = failure?.details?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    notice.append(
      h(
        'ul',
        { class: 'issues', 'data-testid': 'issues' },
        ...issues.map((i) =>
          h('li', {}, h('span', { class: 'mono' }, (i.path ?? []).join('.') || '(the value)'), `: ${i.message ?? ''}`),
        ),
      ),
    );
  }
}

/**
 * The buttons of a plain approval, an uncertain call's, or a changed tool version's.
 * @param {boolean} uncertain
 * @param {(body: Record<string, unknown>) => () => void} decide
 */
function approvalButtons(uncertain, decide, repeat = false) {
  /** @param {string} testid @param {string} text @param {Record<string, unknown>} body @param {Record<string, string>} [extra] */
  const button = (testid, text, body, extra = {}) =>
    h('button', { type: 'button', 'data-testid': testid, onclick: decide(body), ...extra }, text);
  if (repeat) {
    return [
      button('approve', 'Run it again', { decision: 'approve', resolution: 'retry' }, { class: 'primary' }),
      button('record-done', "Use the source's result", { decision: 'approve', resolution: 'done' }),
      button('reject', 'Do not run it', { decision: 'reject' }),
    ];
  }
  if (uncertain) {
    return [
      button('approve', 'Run it again', { decision: 'approve', resolution: 'retry' }, { class: 'primary' }),
      button('record-done', 'Record as done', { decision: 'approve', resolution: 'done' }),
      button('reject', 'It did not happen', { decision: 'reject' }),
    ];
  }
  return [
    button('approve', 'Approve', { decision: 'approve' }, { class: 'primary' }),
    button('reject', 'Reject', { decision: 'reject' }),
    button('reject-terminate', 'Reject and end the run', { decision: 'reject', terminate: true }, { class: 'danger' }),
    button(
      'reject-compensate',
      'Reject, undo and end',
      { decision: 'reject', terminate: true, compensate: true },
      { class: 'danger', title: "Undo the run's completed calls that have a compensator, newest first, then end it" },
    ),
  ];
}

/**
 * The source's call a fork's call would repeat, with its outcome, as the wait's request shows it.
 * @param {ApprovalJson | undefined} row
 */
function repeatedSource(row) {
  const request = /** @type {any} */ (row?.request);
  const source = request?.kind === 'repeat' ? request.source : null;
  if (!source) return null;
  return h(
    'div',
    { class: 'repeated', 'data-testid': 'repeated-source' },
    h(
      'p',
      {},
      'Run ',
      h('a', { href: `#/runs/${encodeURIComponent(source.run_id)}`, class: 'mono' }, source.run_id),
      ' made this call already: ',
      h('span', { class: 'mono' }, source.tool_call_id),
      ` (${source.status})`,
    ),
    h('pre', { class: 'args' }, pretty(source.result)),
  );
}

/** The heading of a step's approval. @param {FoldApproval} pending */
function approvalHeading(pending) {
  if (pending.reason === 'uncertain_side_effect') return 'A human must decide: the outcome of this call is unknown';
  if (pending.reason === 'repeat_effect') {
    return 'This call would do again what the run it was forked from did: run it again?';
  }
  if (pending.reason === 'tool_version_mismatch') {
    return 'The tool changed since this call was decided: run it with the new version?';
  }
  return pending.reason === 'policy' ? 'Waiting for approval (escalated by a policy)' : 'Waiting for approval';
}

/**
 * The calls a step's approval is bound to: each call's arguments, editable on a live plain approval.
 * @param {FoldApproval} pending
 * @param {boolean} editable
 * @param {import('./run-edit.js').Submit} submit
 */
function boundCalls(pending, editable, submit) {
  return h(
    'table',
    { class: 'bound-calls' },
    h(
      'thead',
      {},
      h('tr', {}, h('th', {}, 'call'), h('th', {}, 'tool'), h('th', {}, 'risk'), h('th', {}, 'arguments')),
    ),
    h(
      'tbody',
      {},
      ...pending.toolCalls.map((c) =>
        h(
          'tr',
          { 'data-call': c.id },
          h('td', { class: 'mono' }, c.id),
          h('td', { class: 'mono' }, c.tool),
          h('td', {}, c.risk ?? '—', c.reason ? h('div', { class: 'muted' }, c.reason) : null),
          h('td', {}, h('pre', { class: 'args' }, pretty(c.args)), editable ? callEditor(c, submit) : null),
        ),
      ),
    ),
  );
}

/**
 * An operator's pause: who paused the run and why, where it goes on, and the Resume button.
 * @param {FoldApproval} pending
 * @param {ApprovalJson | undefined} row
 * @param {HTMLInputElement} reason
 * @param {Actions} actions
 * @param {HTMLElement} box
 */
function pausedWait(pending, row, reason, actions, box) {
  const request = row?.request?.kind === 'pause' ? row.request : null;
  const who = request?.by ? ` by ${request.by}` : '';
  const resume = h('button', { type: 'button', class: 'primary', 'data-testid': 'resume' }, 'Resume');
  resume.addEventListener('click', () => {
    const why = reason.value.trim();
    sending(box, () => actions.resume(why ? { reason: why } : {}), actions.errors);
  });
  return [
    h('h3', { 'data-testid': 'paused' }, `Paused${who}${request?.reason ? `: ${request.reason}` : ''}`),
    h(
      'p',
      { class: 'muted' },
      `${pending.id} · resumed, it goes on ${request?.resume === 'executing' ? 'with the calls of the step it planned' : 'by planning its next step'}; it holds no memory meanwhile.`,
    ),
    actions.live ? h('div', { class: 'decide' }, reason, resume) : null,
  ];
}

/**
 * The pending wait, built once.
 * @param {FoldApproval} pending
 * @param {ApprovalJson | undefined} row
 * @param {Actions} actions
 */
function pendingWait(pending, row, actions) {
  const box = h('div', { class: 'approval pending', 'data-testid': 'pending-approval', 'data-approval': pending.id });
  const reason = h('input', {
    'data-testid': 'decision-reason',
    placeholder: 'reason (optional)',
    'aria-label': 'Reason',
  });
  /** @type {(to: 'approval' | 'input', body: Record<string, unknown>, errors: HTMLElement) => void} */
  const submit = (to, body, errors) => {
    const why = reason.value.trim();
    const sent = why ? { ...body, reason: why } : body;
    sending(box, () => (to === 'input' ? actions.answer(pending.id, sent) : actions.decide(pending.id, sent)), errors);
  };
  const decide = (/** @type {Record<string, unknown>} */ body) => () => submit('approval', body, actions.errors);
  const plain = pending.reason === 'approval' || pending.reason === 'policy';
  /** @type {import('./dom.js').Child[]} */
  let parts;
  if (pending.reason === 'input') parts = renderQuestion(pending, row, submit, reason);
  else if (pending.reason === 'budget') parts = renderBudget(pending, row, submit, reason);
  else if (pending.reason === 'paused') parts = pausedWait(pending, row, reason, actions, box);
  else {
    parts = [
      h('h3', {}, approvalHeading(pending)),
      h(
        'p',
        { class: 'muted mono' },
        `${pending.id} · bound to ${pending.toolCalls.length} call(s) and the hash of their arguments ${row?.args_hash.slice(0, 12) ?? ''}…`,
      ),
      pending.votes.length > 0
        ? h(
            'p',
            { 'data-testid': 'votes' },
            'So far: ',
            pending.votes.map((v) => `${v.decision ?? '?'} by ${v.by ?? '?'}`).join(', '),
            ' — the run waits for another decision.',
          )
        : null,
      boundCalls(pending, actions.live && plain, (body, errors) => submit('approval', body, errors)),
      pending.reason === 'repeat_effect' ? repeatedSource(row) : null,
      actions.live
        ? h(
            'div',
            { class: 'decide' },
            reason,
            ...approvalButtons(pending.reason === 'uncertain_side_effect', decide, pending.reason === 'repeat_effect'),
          )
        : null,
    ];
  }
  fill(
    box,
    parts[0],
    waitTerms(pending, row),
    ...parts.slice(1),
    actions.live ? null : h('p', { class: 'muted' }, 'Replaying: decisions are made on the live run.'),
  );
  if (!actions.live) {
    for (const control of box.querySelectorAll('button, input, textarea, select')) control.setAttribute('disabled', '');
  }
  return box;
}

/**
 * The pending approval (the calls it is bound to, and the buttons), and every decision made.
 * @param {HTMLElement} root
 * @param {FoldState} state
 * @param {ApprovalJson[]} approvals from the API (who decided, resolution, role, expiry)
 * @param {ToolCallJson[]} toolCalls from the API (each call's `edited`); empty when replaying
 * @param {Actions} actions
 */
export function renderApprovals(root, state, approvals, toolCalls, actions) {
  const byId = new Map(approvals.map((a) => [a.id, a]));
  const calls = new Map(toolCalls.map((c) => [c.id, c]));
  // A run waits on one approval; an executing run may have a question its call asks in flight.
  const waiting = state.pendingApprovalId ? state.approvals[state.pendingApprovalId] : undefined;
  const inFlight = Object.values(state.approvals).find((a) => a.status === 'pending' && a.question?.from?.in_flight);
  const pending = state.status === 'waiting_human' ? waiting : state.status === 'executing' ? inFlight : undefined;
  const entry = keptOf(root);
  if (pending) {
    const row = byId.get(pending.id);
    const key = JSON.stringify([
      pending.id,
      pending.status,
      pending.role,
      pending.expiresAt,
      pending.escalatedFrom,
      pending.votes.length,
      actions.live,
      row ? [row.status, row.role, row.expires_at, row.args_hash] : null,
    ]);
    if (entry.key !== key || !entry.box) {
      entry.key = key;
      entry.box = pendingWait(pending, row, actions);
      fill(entry.slots.pending, entry.box);
    }
  } else if (state.status === 'waiting_human' && state.waitReason === 'task') {
    // No person decides it: the runtime polls the work the call left running elsewhere.
    const call = toolCalls.find((c) => c.status === 'waiting' && c.handle != null);
    const key = JSON.stringify(['task', call?.id ?? null]);
    if (entry.key !== key || !entry.box) {
      entry.key = key;
      entry.box = h(
        'p',
        { class: 'task-wait', 'data-testid': 'task-wait', 'data-tool-call': call?.id ?? '' },
        `Waits for the work ${call ? `${call.tool} ` : 'its call '}left running elsewhere`,
        call ? h('span', { class: 'mono muted' }, ` ${brief(call.handle, 80)}`) : null,
        ': the runtime polls it, no one decides this wait (cancel the run to stop it).',
      );
      fill(entry.slots.pending, entry.box);
    }
  } else if (entry.box) {
    entry.key = '';
    entry.box = null;
    fill(entry.slots.pending);
  }
  const decided = Object.values(state.approvals).filter((a) => a.status !== 'pending');
  fill(
    entry.slots.decided,
    decided.length === 0
      ? null
      : h(
          'ul',
          { class: 'decisions' },
          ...decided.map((a) => {
            const row = byId.get(a.id);
            return h(
              'li',
              { 'data-approval': a.id, 'data-decision': a.status, 'data-action': a.action ?? row?.resolution ?? '' },
              h('span', { class: `badge ${a.status}` }, a.status),
              ` by ${a.decidedBy ?? row?.decided_by ?? '?'}`,
              row?.kind === 'uncertain' && row.resolution ? ` (${row.resolution})` : '',
              decidedDetail(a, row),
              a.decisionReason ? `: ${a.decisionReason}` : '',
              h(
                'span',
                { class: 'muted' },
                ` — ${a.toolCalls.map((c) => `${c.tool} ${brief(c.args, 60)}`).join(', ')}`,
              ),
              ...decidedEdits(a, calls),
            );
          }),
        ),
  );
}
