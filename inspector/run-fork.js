// @ts-check
/**
 * Forking a run from the inspector: "Fork from here" on each step (the Steps tab and the step's
 * row of the timeline) and on the replay, at the step the replay shows. Its form holds the
 * step's decision as JSON, editable: left as it is, the fork's planner decides the step again;
 * changed, the fork takes that decision (checked by the server like any). A repeated effect of
 * the source waits for a person unless allowed. The fork is made through the API
 * (`POST /v1/runs/{id}/fork`) and opened; its lineage shows on both runs.
 */
import { get, post } from './api.js';
import { fill, h } from './dom.js';
import { showError } from './notices.js';

/** @typedef {import('./types.js').RunJson} RunJson */

/**
 * The "Fork from here" control of step `stepIndex`.
 * @param {{ runId: string, stepIndex: number, decision: () => unknown, errors: HTMLElement, where: string }} opts
 *   `decision` gives the step's journaled decision when the form opens (null: the step has none);
 *   `where` names the place of the control, for its test id.
 * @returns {HTMLDetailsElement}
 */
export function forkControl({ runId, stepIndex, decision, errors, where }) {
  const text = h('textarea', {
    rows: 6,
    spellcheck: 'false',
    class: 'mono',
    'data-testid': 'fork-decision',
    'aria-label': `Decision of step ${stepIndex} for the fork, editable`,
  });
  const allow = h('input', { type: 'checkbox', 'data-testid': 'fork-allow-repeats' });
  const submit = h(
    'button',
    { type: 'button', class: 'primary', 'data-testid': 'fork-submit' },
    `Fork at step ${stepIndex}`,
  );
  const note = h('p', { class: 'muted' });
  const box = h(
    'details',
    { class: 'fork', 'data-testid': `fork-${where}`, 'data-step': stepIndex },
    h('summary', {}, 'Fork from here'),
    note,
    text,
    h('label', { class: 'allow' }, allow, ' let repeated effects run without asking'),
    h('div', {}, submit),
  );
  /** The decision as the form was opened with it (JSON text), to tell an edit from none. */
  let original = '';
  box.addEventListener('toggle', () => {
    if (!box.open || original !== '' || text.value !== '') return;
    const given = decision();
    original = given === null || given === undefined ? '' : JSON.stringify(given, null, 2);
    text.value = original;
    note.textContent = original
      ? `A new run with steps 0–${stepIndex - 1} copied from this one (nothing of them runs again). Leave the decision as it is and the planner decides step ${stepIndex} again; change it and the fork takes yours.`
      : `A new run with the steps before ${stepIndex} copied from this one (nothing of them runs again); the planner decides step ${stepIndex}. Write a decision here to give it instead.`;
  });
  submit.addEventListener('click', () => {
    /** @type {Record<string, unknown>} */
    const body = { at_step: stepIndex };
    const edited = text.value.trim();
    if (edited !== '' && edited !== original.trim()) {
      try {
        body.decision = JSON.parse(edited);
      } catch (error) {
        showError(
          new Error(`The decision is not JSON: ${error instanceof Error ? error.message : String(error)}`),
          errors,
        );
        return;
      }
    }
    if (allow.checked) body.repeat_effects = 'allow';
    submit.disabled = true;
    post(`/v1/runs/${encodeURIComponent(runId)}/fork`, body)
      .then((/** @type {RunJson} */ fork) => {
        location.hash = `#/runs/${encodeURIComponent(fork.id)}`;
      })
      .catch((error) => showError(error, errors))
      .finally(() => {
        submit.disabled = false;
      });
  });
  return box;
}

/**
 * A run's lineage: the run it was forked from (and at which step), and its own forks; the parent
 * whose call started it (an agent called as a tool), its own children, and, while it waits on a
 * child, the wait of a person down the tree (decided here on this run's id, or on the run that asks).
 * @param {HTMLElement} root
 * @param {RunJson} run
 * @param {RunJson[]} forks
 * @param {(approvalId: string, body: Record<string, unknown>) => Promise<unknown>} [decide]
 */
export function renderLineage(root, run, forks, decide) {
  const link = (/** @type {string} */ id) => h('a', { href: `#/runs/${encodeURIComponent(id)}`, class: 'mono' }, id);
  const from = run.forked_from;
  const children = run.children ?? [];
  const stack = run.handoff_stack ?? [];
  fill(
    root,
    stack.length > 0
      ? h(
          'p',
          { 'data-testid': 'handoff-stack' },
          `Handed over (${stack.length}): `,
          h('span', { class: 'mono' }, run.agent?.name ?? 'its agent'),
          ...stack.flatMap((entry) => [
            ' → ',
            h(
              'span',
              { class: 'mono', 'data-agent': entry.agent, title: `tools: ${entry.tools.join(', ') || 'none'}` },
              entry.agent,
            ),
            ` (since step ${entry.step})`,
          ]),
          ` · ${stack[stack.length - 1]?.agent} plans the next step`,
        )
      : null,
    run.parent
      ? h(
          'p',
          { 'data-testid': 'parent-run' },
          'Child of ',
          link(run.parent.run_id),
          ` (its call ${run.parent.tool_call_id})`,
        )
      : null,
    children.length > 0
      ? h(
          'p',
          { 'data-testid': 'children' },
          `Children (${children.length}): `,
          ...children.flatMap((child, i) => [
            i > 0 ? ', ' : '',
            h('span', { 'data-child': child.run_id, 'data-status': child.status }, link(child.run_id)),
            ` agent ${child.agent ?? '?'} (${child.status.replace('_', ' ')})`,
          ]),
        )
      : null,
    run.child_wait ? childWait(run.child_wait, link, decide) : null,
    from ? h('p', { 'data-testid': 'forked-from' }, 'Forked from ', link(from.run_id), ` at step ${from.step}`) : null,
    forks.length > 0
      ? h(
          'p',
          { 'data-testid': 'forks' },
          `Forks (${forks.length}): `,
          ...forks.flatMap((fork, i) => [
            i > 0 ? ', ' : '',
            link(fork.id),
            ` at step ${fork.forked_from?.step ?? '?'} (${fork.status.replace('_', ' ')})`,
          ]),
        )
      : null,
  );
  root.hidden = !from && forks.length === 0 && !run.parent && children.length === 0 && stack.length === 0;
}

/**
 * What a run waiting on its child shows: the child, and the person's wait down the tree with
 * Approve / Reject for an approval (a question or a budget is answered on the run that asks).
 * @param {NonNullable<RunJson['child_wait']>} wait
 * @param {(id: string) => HTMLElement} link
 * @param {((approvalId: string, body: Record<string, unknown>) => Promise<unknown>) | undefined} decide
 */
function childWait(wait, link, decide) {
  const asking = wait.asking;
  const buttons =
    asking && decide && (asking.wait_reason === 'approval' || asking.wait_reason === 'policy')
      ? [
          h(
            'button',
            {
              type: 'button',
              'data-testid': 'child-approve',
              onclick: () => void decide(asking.pending_approval_id, { decision: 'approve' }),
            },
            'Approve',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'data-testid': 'child-reject',
              onclick: () => void decide(asking.pending_approval_id, { decision: 'reject' }),
            },
            'Reject',
          ),
        ]
      : [];
  return h(
    'div',
    { class: 'child-wait', 'data-testid': 'child-wait', 'data-child': wait.run_id },
    h(
      'p',
      {},
      'Waiting on child run ',
      link(wait.run_id),
      ` (agent ${wait.agent ?? '?'}, ${wait.status.replace('_', ' ')})`,
    ),
    asking
      ? h(
          'p',
          { 'data-testid': 'child-asking', 'data-approval': asking.pending_approval_id },
          'Run ',
          link(asking.run_id),
          asking.pending_input
            ? ` asks: ${asking.pending_input.question}`
            : ` waits for ${asking.wait_reason === 'budget' ? 'more budget' : 'approval'} (${asking.pending_approval_id})`,
          ' — decide it here or on that run. ',
          ...buttons,
        )
      : h('p', { class: 'muted' }, 'No person is asked down the tree: the child is working.'),
    asking && asking.tool_calls.length > 0
      ? h(
          'ul',
          { class: 'child-calls', 'data-testid': 'child-asking-calls' },
          ...asking.tool_calls.map((c) => h('li', { class: 'mono' }, `${c.tool} ${JSON.stringify(c.args)}`)),
        )
      : null,
  );
}

/**
 * The forks of a run, newest first (one page).
 * @param {string} runId
 * @returns {Promise<RunJson[]>}
 */
export async function forksOf(runId) {
  return (await get(`/v1/runs?forked_from=${encodeURIComponent(runId)}&limit=50`)).runs;
}
