// @ts-check
/**
 * The waits a person answers other than a plain approval: a question (a form built from its JSON
 * Schema, its answer sent to the run's input), a budget that ran out (each limit and its use, new
 * limits, Extend or End), and what any wait asks of whoever decides it: the role it needs, the
 * instant it expires and what happens then, and whether a policy or an expiry escalated it.
 */
import { h, fill } from './dom.js';
import { brief, count, dateTime, duration, money } from './format.js';
import { questionField } from './schema-form.js';

/** @typedef {import('./types.js').FoldApproval} FoldApproval */
/** @typedef {import('./types.js').ApprovalJson} ApprovalJson */
/** @typedef {(path: 'approval' | 'input', body: Record<string, unknown>, errors: HTMLElement) => void} Submit */

/** How each budget reads. */
export const BUDGET_LABELS = /** @type {Record<string, string>} */ ({
  max_steps: 'steps',
  max_llm_calls: 'llm calls',
  max_tool_calls: 'tool calls',
  max_tokens: 'tokens',
  max_cost_usd: 'cost',
  timeout: 'deadline',
});

/**
 * Who may decide a wait and until when: its role, its expiry instant and what happens then, and
 * an escalation (by a policy, or by an expiry that handed it to another role).
 * @param {FoldApproval} pending
 * @param {ApprovalJson | undefined} row the API's row (the current role and expiry)
 */
export function waitTerms(pending, row) {
  // The events on the page are as new as anything the API said (an escalation comes as one);
  // the API's row stands in for a log written before waits carried their terms.
  const folded = pending.role !== null;
  const role = (folded ? pending.role : row?.role) ?? 'approve';
  const expiresAt = folded ? pending.expiresAt : (row?.expires_at ?? null);
  const then = row?.on_expire;
  const request = /** @type {{ kind?: string, reason?: string | null } | null | undefined} */ (row?.request);
  const policyReason = request?.kind === 'policy' ? request.reason : pending.toolCalls.find((c) => c.reason)?.reason;
  return h(
    'p',
    { class: 'wait-terms', 'data-testid': 'wait-terms' },
    h('span', { 'data-testid': 'wait-role', 'data-role': role }, `Decided by the role '${role}'`),
    pending.reason === 'policy'
      ? h(
          'span',
          { 'data-testid': 'escalated-policy' },
          ` · escalated by a policy${policyReason ? `: ${policyReason}` : ''}`,
        )
      : null,
    pending.escalatedFrom
      ? h(
          'span',
          { 'data-testid': 'escalated', 'data-from-role': pending.escalatedFrom },
          ` · escalated from '${pending.escalatedFrom}' to '${role}' when its first expiry passed`,
        )
      : null,
    expiresAt
      ? h(
          'span',
          { 'data-testid': 'wait-expiry', 'data-expires-at': expiresAt },
          ` · expires ${dateTime(expiresAt)}`,
          expiresAt > Date.now() ? ` (in ${duration(expiresAt - Date.now())})` : ' (passed)',
          then?.outcome === 'end'
            ? ', then the run ends'
            : then?.outcome === 'escalate'
              ? `, then it goes to the role '${then.role ?? '?'}'`
              : ', then it counts as rejected',
        )
      : h('span', { class: 'muted' }, ' · no expiry'),
  );
}

/**
 * A question waiting for its answer: the form its schema calls for, Answer and Decline.
 * @param {FoldApproval} pending
 * @param {ApprovalJson | undefined} row
 * @param {Submit} submit
 * @param {HTMLInputElement} reason the wait's reason field, sent with the answer
 */
export function renderQuestion(pending, row, submit, reason) {
  const request =
    /** @type {{ question?: string, choices?: string[] | null, schema?: Record<string, unknown> | null } | null} */ (
      row?.request ?? null
    );
  const ask = {
    question: pending.question?.text ?? request?.question ?? '',
    choices: pending.question?.choices ?? request?.choices ?? null,
    schema: pending.question?.schema ?? request?.schema ?? null,
  };
  const field = questionField(ask);
  const errors = h('div', { class: 'form-errors', 'data-testid': 'answer-errors' });
  const form = h(
    'form',
    { class: 'answer-form', 'data-testid': 'answer-form', 'aria-label': 'Answer the question' },
    field.element,
    h(
      'div',
      { class: 'decide' },
      reason,
      h('button', { type: 'submit', class: 'primary', 'data-testid': 'submit-answer' }, 'Answer'),
      h(
        'button',
        {
          type: 'button',
          'data-testid': 'decline',
          onclick: () => submit('approval', { decision: 'reject' }, errors),
        },
        'Decline to answer',
      ),
    ),
    errors,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const read = field.read();
    if (!read.ok) {
      fill(errors, h('div', { class: 'error', role: 'alert' }, read.message));
      return;
    }
    submit('input', { answer: read.value }, errors);
  });
  const from = pending.question?.from ?? null;
  return [
    h('h3', {}, 'A question for a person'),
    from
      ? h(
          'p',
          { class: 'asked-by muted', 'data-testid': 'asked-by', 'data-in-flight': String(from.in_flight) },
          `Asked by ${from.server ? `MCP server ${from.server} during its call of ${from.tool}` : `tool ${from.tool} during its call`}: ${from.in_flight ? 'the call waits open for the answer (until a restart)' : 'the call stopped, and runs again once answered'}.`,
        )
      : null,
    h('p', { class: 'question', 'data-testid': 'question' }, ask.question),
    form,
  ];
}

/** A limit or a use, as it reads. @param {string} budget @param {number | null} value */
function showLimit(budget, value) {
  if (value === null) return 'no limit';
  if (budget === 'timeout') return dateTime(value);
  return budget === 'max_cost_usd' ? money(value) : count(value);
}

/** How much of a limit was used; for the deadline, the instant the wait began (when there is one). @param {{ budget: string, limit: number | null, used: number }} l */
function usedOf(l) {
  if (l.budget !== 'timeout') return showLimit(l.budget, l.used);
  return l.limit === null ? '—' : `now ${dateTime(l.used)}`;
}

/** What to offer as the new limit of the budget that ran out. @param {{ budget: string, limit: number | null, used: number }} l */
function suggestion(l) {
  if (l.limit === null) return '';
  if (l.budget === 'max_cost_usd') return String(Math.max(l.limit * 2, l.used * 2, 0.01));
  return String(Math.max(l.limit * 2, l.used + 1));
}

/**
 * A budget that ran out: each limit, its use, which one ran out at which step; new limits (more
 * time for the deadline), Extend or End.
 * @param {FoldApproval} pending
 * @param {ApprovalJson | undefined} row
 * @param {Submit} submit
 * @param {HTMLInputElement} reason the wait's reason field, sent with the decision
 */
export function renderBudget(pending, row, submit, reason) {
  const request = /** @type {{ budget?: string, step_index?: number, limits?: any[] } | null} */ (row?.request ?? null);
  const ran = pending.budget?.budget ?? request?.budget ?? '?';
  const step = pending.budget?.stepIndex ?? request?.step_index ?? 0;
  /** @type {{ budget: string, limit: number | null, used: number }[]} */
  const limits = pending.budget?.limits ?? request?.limits ?? [];
  const errors = h('div', { class: 'form-errors', 'data-testid': 'budget-errors' });
  const inputs = limits.map((l) => {
    const timeout = l.budget === 'timeout';
    const input = h('input', {
      type: 'number',
      min: 0,
      step: l.budget === 'max_cost_usd' ? 'any' : '1',
      'data-testid': `new-${l.budget}`,
      'aria-label': timeout ? 'More time, in seconds' : `New limit of ${BUDGET_LABELS[l.budget] ?? l.budget}`,
      placeholder: timeout ? 'seconds' : 'unchanged',
    });
    if (l.budget === ran && !timeout) input.value = suggestion(l);
    return { l, input };
  });
  const extend = () => {
    /** @type {Record<string, number>} */
    const next = {};
    for (const { l, input } of inputs) {
      if (input.value.trim() === '') continue;
      const value = Number(input.value);
      if (l.budget === 'timeout') next.timeout_ms = Math.round(value * 1000);
      else next[l.budget] = value;
    }
    submit('approval', { decision: 'extend', limits: next }, errors);
  };
  return [
    h(
      'h3',
      { 'data-testid': 'budget-ran-out', 'data-budget': ran, 'data-step': step },
      `A budget ran out: ${BUDGET_LABELS[ran] ?? ran}, at step ${step}. Go on with new limits, or end the run?`,
    ),
    h(
      'table',
      { class: 'budget-limits' },
      h('thead', {}, h('tr', {}, h('th', {}, 'budget'), h('th', {}, 'used'), h('th', {}, 'limit'), h('th', {}, 'new'))),
      h(
        'tbody',
        {},
        ...inputs.map(({ l, input }) =>
          h(
            'tr',
            { 'data-limit': l.budget, class: l.budget === ran ? 'ran-out' : '' },
            h('td', {}, BUDGET_LABELS[l.budget] ?? l.budget, l.budget === ran ? h('strong', {}, ' — ran out') : null),
            h('td', { class: 'num' }, usedOf(l)),
            h('td', { class: 'num' }, showLimit(l.budget, l.limit)),
            h('td', {}, input),
          ),
        ),
      ),
    ),
    h(
      'div',
      { class: 'decide' },
      reason,
      h('button', { type: 'button', class: 'primary', 'data-testid': 'extend', onclick: extend }, 'Extend'),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'data-testid': 'end',
          onclick: () => submit('approval', { decision: 'end' }, errors),
        },
        'End the run',
      ),
    ),
    errors,
  ];
}

/**
 * What a decided wait's line adds: the answer and who gave it, the output given instead of a
 * call, the limits an extension set, an ending.
 * @param {FoldApproval} a
 * @param {ApprovalJson | undefined} row
 */
export function decidedDetail(a, row) {
  const given = /** @type {Record<string, any> | null} */ (a.given ?? row?.answer ?? null);
  const action = a.action ?? row?.resolution ?? null;
  switch (action) {
    case 'answer':
      return h('span', { 'data-testid': 'given-answer' }, ` answered: ${brief(given?.answer, 200)}`);
    case 'respond':
      return h('span', { 'data-testid': 'given-output' }, ` responded as the tool: ${brief(given?.output, 160)}`);
    case 'extend': {
      const limits = Object.entries(given?.limits ?? {}).map(([k, v]) => `${BUDGET_LABELS[k] ?? k} ${v}`);
      if (typeof given?.deadline_at === 'number') limits.push(`deadline ${dateTime(given.deadline_at)}`);
      return h('span', { 'data-testid': 'given-limits' }, ` extended: ${limits.join(', ')}`);
    }
    case 'end':
      return h('span', {}, ' ended the run');
    case 'edit':
      return h('span', {}, ' with edits');
    default:
      return null;
  }
}
