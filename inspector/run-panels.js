// @ts-check
/**
 * A run's panels: its input and outcome, usage against its budgets and deadline, the pending
 * approval with the exact calls it is bound to (and the decisions made), and the live drafts of
 * the model.
 */
import { h, fill } from './dom.js';
import { brief, count, dateTime, duration, money, pretty } from './format.js';

/** @typedef {import('./types.js').FoldState} FoldState */
/** @typedef {import('./types.js').RunJson} RunJson */
/** @typedef {{ step: number, attempt: number, text: string, committed: boolean }} Draft */

/**
 * @param {Record<string, unknown> | null} limits the run's limits, from its `run.created` event
 * @param {string} snake
 * @param {string} camel
 * @returns {number | null}
 */
function limitOf(limits, snake, camel) {
  const value = limits?.[snake] ?? limits?.[camel];
  return typeof value === 'number' ? value : null;
}

/**
 * Usage against budgets: one meter per budget (unlimited ones show the count alone).
 * @param {HTMLElement} root
 * @param {{ steps: number, llmCalls: number, toolCalls: number, tokens: number, costUsd: number }} usage
 * @param {Record<string, unknown> | null} limits
 * @param {number | null} deadlineAt
 * @param {boolean} ended
 */
export function renderUsage(root, usage, limits, deadlineAt, ended) {
  /** @type {[string, number, number | null, (n: number) => string][]} */
  const rows = [
    ['steps', usage.steps, limitOf(limits, 'max_steps', 'maxSteps'), count],
    ['llm calls', usage.llmCalls, limitOf(limits, 'max_llm_calls', 'maxLlmCalls'), count],
    ['tool calls', usage.toolCalls, limitOf(limits, 'max_tool_calls', 'maxToolCalls'), count],
    ['tokens', usage.tokens, limitOf(limits, 'max_tokens', 'maxTokens'), count],
    ['cost', usage.costUsd, limitOf(limits, 'max_cost_usd', 'maxCostUsd'), money],
  ];
  const meters = rows.map(([name, used, limit, show]) => {
    const meter = h('meter', { min: 0, max: limit ?? 1, value: limit === null ? 0 : Math.min(used, limit) });
    return h(
      'div',
      { class: 'usage-row', 'data-usage': name.replace(' ', '_') },
      h('span', { class: 'usage-name' }, name),
      h('span', { class: 'num usage-value' }, limit === null ? `${show(used)}` : `${show(used)} / ${show(limit)}`),
      limit === null ? h('span', { class: 'muted' }, 'no limit') : meter,
    );
  });
  let deadline = h('span', { class: 'muted' }, 'none');
  if (deadlineAt !== null) {
    const left = deadlineAt - Date.now();
    deadline = h('span', {}, dateTime(deadlineAt), ended ? '' : left > 0 ? ` (in ${duration(left)})` : ' (passed)');
  }
  fill(root, ...meters, h('div', { class: 'usage-row' }, h('span', { class: 'usage-name' }, 'deadline'), deadline));
}

/**
 * The pending approval (the calls it is bound to, and the buttons), and every decision made.
 * @param {HTMLElement} root
 * @param {FoldState} state
 * @param {import('./types.js').ApprovalJson[]} approvals from the API (who decided, resolution)
 * @param {{ live: boolean, decide: (approvalId: string, body: Record<string, unknown>) => Promise<void> }} actions
 */
export function renderApprovals(root, state, approvals, actions) {
  const byId = new Map(approvals.map((a) => [a.id, a]));
  const pending = state.pendingApprovalId ? state.approvals[state.pendingApprovalId] : undefined;
  const parts = [];
  if (pending && state.status === 'waiting_human') {
    const uncertain = pending.reason === 'uncertain_side_effect';
    const reason = h('input', {
      'data-testid': 'decision-reason',
      placeholder: 'reason (optional)',
      'aria-label': 'Reason',
    });
    const errors = h('div', { class: 'decision-errors' });
    const decide = (/** @type {Record<string, unknown>} */ body) => () => {
      for (const button of root.querySelectorAll('button')) button.disabled = true;
      const why = reason.value.trim();
      void actions
        .decide(pending.id, why ? { ...body, reason: why } : body)
        .catch(() => undefined)
        .finally(() => {
          for (const button of root.querySelectorAll('button')) button.disabled = false;
        });
    };
    const buttons = uncertain
      ? [
          h(
            'button',
            {
              type: 'button',
              class: 'primary',
              'data-testid': 'approve',
              onclick: decide({ decision: 'approve', resolution: 'retry' }),
            },
            'Run it again',
          ),
          h(
            'button',
            {
              type: 'button',
              'data-testid': 'record-done',
              onclick: decide({ decision: 'approve', resolution: 'done' }),
            },
            'Record as done',
          ),
          h(
            'button',
            { type: 'button', 'data-testid': 'reject', onclick: decide({ decision: 'reject' }) },
            'It did not happen',
          ),
        ]
      : [
          h(
            'button',
            { type: 'button', class: 'primary', 'data-testid': 'approve', onclick: decide({ decision: 'approve' }) },
            'Approve',
          ),
          h('button', { type: 'button', 'data-testid': 'reject', onclick: decide({ decision: 'reject' }) }, 'Reject'),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'data-testid': 'reject-terminate',
              onclick: decide({ decision: 'reject', terminate: true }),
            },
            'Reject and end the run',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'data-testid': 'reject-compensate',
              title: "Undo the run's completed calls that have a compensator, newest first, then end it",
              onclick: decide({ decision: 'reject', terminate: true, compensate: true }),
            },
            'Reject, undo and end',
          ),
        ];
    parts.push(
      h(
        'div',
        { class: 'approval pending', 'data-testid': 'pending-approval', 'data-approval': pending.id },
        h(
          'h3',
          {},
          uncertain
            ? 'A human must decide: the outcome of this call is unknown'
            : pending.reason === 'tool_version_mismatch'
              ? 'The tool changed since this call was decided: run it with the new version?'
              : 'Waiting for approval',
        ),
        h(
          'p',
          { class: 'muted mono' },
          `${pending.id} · bound to ${pending.toolCalls.length} call(s) and the hash of their arguments ${byId.get(pending.id)?.args_hash.slice(0, 12) ?? ''}…`,
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
        h(
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
                h('td', {}, h('pre', { class: 'args' }, pretty(c.args))),
              ),
            ),
          ),
        ),
        actions.live
          ? h('div', { class: 'decide' }, reason, ...buttons)
          : h('p', { class: 'muted' }, 'Replaying: decisions are made on the live run.'),
        errors,
      ),
    );
  }
  const decided = Object.values(state.approvals).filter((a) => a.status !== 'pending');
  if (decided.length > 0) {
    parts.push(
      h(
        'ul',
        { class: 'decisions' },
        ...decided.map((a) => {
          const row = byId.get(a.id);
          return h(
            'li',
            { 'data-approval': a.id, 'data-decision': a.status },
            h('span', { class: `badge ${a.status}` }, a.status),
            ` by ${a.decidedBy ?? row?.decided_by ?? '?'}`,
            row?.kind === 'uncertain' && row.resolution ? ` (${row.resolution})` : '',
            a.decisionReason ? `: ${a.decisionReason}` : '',
            h('span', { class: 'muted' }, ` — ${a.toolCalls.map((c) => `${c.tool} ${brief(c.args, 60)}`).join(', ')}`),
          );
        }),
      ),
    );
  }
  fill(root, ...parts);
}

/**
 * Streamed model text: shown live, clearly not the answer, superseded once the step commits.
 * @param {HTMLElement} root
 * @param {{ step: number, attempt: number, text: string, committed: boolean } | null} draft
 */
export function renderDraft(root, draft) {
  if (!draft) return fill(root);
  return fill(
    root,
    h(
      'div',
      { class: `draft${draft.committed ? ' committed' : ''}`, 'data-testid': 'draft' },
      h(
        'div',
        { class: 'draft-label' },
        draft.committed
          ? `Draft of step ${draft.step} — superseded by the committed decision; never the answer`
          : `Draft — the model is writing step ${draft.step} (attempt ${draft.attempt}); not the answer`,
      ),
      h('pre', { 'data-testid': 'draft-text' }, draft.text),
    ),
  );
}

/**
 * The run's input and how it ended: its answer, or its failure or stop reason.
 * @param {{ input: HTMLElement, outcome: HTMLElement }} el
 * @param {RunJson} run
 */
export function renderOutcome(el, run) {
  fill(el.input, 'Input: ', run.input);
  fill(
    el.outcome,
    run.answer ? h('div', { class: 'answer', 'data-testid': 'answer' }, h('strong', {}, 'Answer: '), run.answer) : null,
    run.failure
      ? h(
          'div',
          { class: 'failure' },
          h('strong', {}, `${run.stop_reason ?? 'failed'}: `),
          `${run.failure.code}: ${run.failure.message}`,
        )
      : run.stop_reason
        ? h('div', { class: 'failure' }, h('strong', {}, 'Stopped: '), run.stop_reason)
        : null,
  );
}

/**
 * A run's usage as the API reports it, in the fold's shape (for `renderUsage`).
 * @param {RunJson} run
 */
export function usageOfRun(run) {
  return {
    steps: run.usage.steps,
    llmCalls: run.usage.llm_calls,
    toolCalls: run.usage.tool_calls,
    tokens: run.usage.tokens,
    costUsd: run.usage.cost_usd,
  };
}

/**
 * The model's live draft after one `draft` event: the same step's attempt grows, another starts over.
 * @param {Draft | null} draft
 * @param {import('./types.js').EventJson} event
 * @returns {Draft}
 */
export function withDraft(draft, event) {
  const step = Number(event.data.step_index);
  const attempt = Number(event.data.attempt ?? 1);
  const same = draft && draft.step === step && draft.attempt === attempt && !draft.committed;
  return { step, attempt, text: (same ? draft.text : '') + String(event.data.text ?? ''), committed: false };
}
