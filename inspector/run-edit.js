// @ts-check
/**
 * Edit then approve, and respond as the tool, on a pending approval's calls: each call's
 * arguments as editable JSON, with what changed (proposed → edited) shown as it is typed and
 * before anything is sent; "Approve with edits" sends the edited arguments of that call, and
 * "Respond instead" a person's output in place of running it. A decided call shows the same diff,
 * from what the decider gave or the ledger's `edited`.
 */
import { h, fill } from './dom.js';
import { brief } from './format.js';
import { diffJson, editableJson } from './json-diff.js';

/** @typedef {import('./json-diff.js').Change} Change */
/** @typedef {(body: Record<string, unknown>, errors: HTMLElement) => void} Submit */

/**
 * The changes as a list: removed, added, changed, each with its path.
 * @param {Change[]} changes
 * @param {string} [testid]
 */
export function renderDiff(changes, testid = 'diff') {
  if (changes.length === 0) return h('p', { class: 'muted diff-none', 'data-testid': testid }, 'No changes.');
  return h(
    'ul',
    { class: 'diff', 'data-testid': testid, 'aria-label': 'Changes to the arguments' },
    ...changes.map((c) =>
      h(
        'li',
        { class: `diff-${c.kind}`, 'data-kind': c.kind, 'data-path': c.path },
        h(
          'span',
          { class: 'diff-sign', 'aria-hidden': 'true' },
          c.kind === 'removed' ? '−' : c.kind === 'added' ? '+' : '~',
        ),
        h('span', { class: 'mono diff-path' }, c.path || '(the whole value)'),
        c.kind === 'removed'
          ? ` removed ${brief(c.before, 100)}`
          : c.kind === 'added'
            ? ` added ${brief(c.after, 100)}`
            : ` ${brief(c.before, 60)} → ${brief(c.after, 60)}`,
      ),
    ),
  );
}

/** @param {string} text @returns {{ ok: true, value: unknown } | { ok: false, message: string }} */
function parseJson(text) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `Not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * A call's editable arguments, the diff against the proposed ones, and its two buttons; folded
 * until a person opens it, under the arguments as proposed.
 * @param {{ id: string, tool: string, args: unknown }} call
 * @param {Submit} submit
 */
export function callEditor(call, submit) {
  const text = editableJson(call.args);
  const args = h(
    'textarea',
    {
      class: 'mono args-edit',
      rows: Math.min(12, text.split('\n').length + 1),
      spellcheck: 'false',
      'data-testid': 'edit-args',
      'aria-label': `Arguments of ${call.tool} (${call.id}), editable`,
    },
    text,
  );
  const diff = h('div', { class: 'diff-box', 'aria-live': 'polite' });
  const errors = h('div', { class: 'form-errors', 'data-testid': 'edit-errors' });
  const approve = h(
    'button',
    { type: 'button', class: 'primary', 'data-testid': 'approve-edits', disabled: true },
    'Approve with edits',
  );
  const update = () => {
    const parsed = parseJson(args.value);
    approve.disabled = !parsed.ok || diffJson(call.args, parsed.value).length === 0;
    fill(
      diff,
      parsed.ok
        ? renderDiff(diffJson(call.args, parsed.value), 'edit-diff')
        : h('p', { class: 'diff-invalid', 'data-testid': 'edit-diff' }, parsed.message),
    );
  };
  args.addEventListener('input', update);
  update();
  approve.addEventListener('click', () => {
    const parsed = parseJson(args.value);
    if (parsed.ok) submit({ decision: 'edit', tool_call_id: call.id, args: parsed.value }, errors);
  });
  return h(
    'div',
    { class: 'call-edit', 'data-call-edit': call.id },
    h(
      'details',
      { class: 'edit', 'data-testid': 'edit-box' },
      h('summary', {}, 'Edit the arguments, then approve'),
      args,
      diff,
      h('div', { class: 'decide' }, approve),
    ),
    respondBox(call, submit),
    errors,
  );
}

/**
 * "Respond as the tool": a person's output, in the tool's output shape, instead of running it.
 * @param {{ id: string, tool: string }} call
 * @param {Submit} submit
 */
function respondBox(call, submit) {
  const output = h('textarea', {
    class: 'mono',
    rows: 4,
    spellcheck: 'false',
    'data-testid': 'respond-output',
    'aria-label': `Output of ${call.tool} (${call.id}) given instead of running it (JSON)`,
    placeholder: '{ "…": "…" }',
  });
  const errors = h('div', { class: 'form-errors', 'data-testid': 'respond-errors' });
  const button = h('button', { type: 'button', 'data-testid': 'respond' }, 'Respond instead');
  button.addEventListener('click', () => {
    const parsed = parseJson(output.value);
    if (!parsed.ok) {
      fill(errors, h('div', { class: 'error', role: 'alert' }, parsed.message));
      return;
    }
    submit({ decision: 'respond', tool_call_id: call.id, output: parsed.value }, errors);
  });
  return h(
    'details',
    { class: 'respond', 'data-testid': 'respond-box' },
    h('summary', {}, 'Respond as the tool instead of running it'),
    output,
    h('div', { class: 'decide' }, button),
    errors,
  );
}

/**
 * The edits a decision made, each call's diff (proposed → edited), from what the decider gave.
 * @param {import('./types.js').FoldApproval} approval
 * @param {Map<string, import('./types.js').ToolCallJson>} calls the API's ledger rows by id (may be empty)
 */
export function decidedEdits(approval, calls) {
  const given = /** @type {{ edits?: { tool_call_id: string, args: unknown }[] } | null} */ (approval.given);
  const edits = Array.isArray(given?.edits) ? given.edits : [];
  return edits.map((edit) => {
    const proposed =
      calls.get(edit.tool_call_id)?.edited?.proposed_args ??
      approval.toolCalls.find((c) => c.id === edit.tool_call_id)?.args;
    return h(
      'div',
      { class: 'decided-edit', 'data-edited-call': edit.tool_call_id },
      h('span', { class: 'muted' }, `edited ${edit.tool_call_id}:`),
      renderDiff(diffJson(proposed, edit.args), 'decided-diff'),
    );
  });
}

/**
 * The ledger's mark on an edited call: who edited it, and the diff on demand.
 * @param {{ proposed_args: unknown, by: string | null, reason: string | null } | null | undefined} edited
 * @param {unknown} args the arguments it ran with
 */
export function editedMark(edited, args) {
  if (!edited) return null;
  return h(
    'details',
    { class: 'edited', 'data-edited-by': edited.by ?? '' },
    h('summary', {}, `edited by ${edited.by ?? 'a person'}${edited.reason ? ` (${edited.reason})` : ''}`),
    renderDiff(diffJson(edited.proposed_args, args), 'ledger-diff'),
  );
}
