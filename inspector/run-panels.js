// @ts-check
/**
 * A run's panels: its input and outcome, usage against its budgets and deadline, and the live
 * drafts of the model (the pending wait and the decisions are `run-approvals.js`).
 */
import { h, fill } from './dom.js';
import { count, dateTime, duration, money } from './format.js';

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
