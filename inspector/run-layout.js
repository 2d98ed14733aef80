// @ts-check
/**
 * The elements of a run's view, built once: the head with its actions, the panels the view
 * fills (approvals, drafts, chart and replay, usage), and the tabs of the timeline, steps,
 * ledger and trace. Behaviour is wired by `run-view.js`.
 */
import { h } from './dom.js';

const TABS = ['timeline', 'steps', 'ledger', 'trace'];

/**
 * @param {string} runId
 * @param {SVGElement} chartElement
 */
export function createRunLayout(runId, chartElement) {
  const el = {
    status: h('span', { class: 'badge', 'data-testid': 'run-status' }),
    input: h('p', { class: 'run-input' }),
    lineage: h('div', { class: 'lineage', 'data-testid': 'lineage', hidden: true }),
    replayFork: h('div', { class: 'replay-fork', 'data-testid': 'replay-fork' }),
    outcome: h('div', { class: 'run-outcome' }),
    errors: h('div', { class: 'run-errors' }),
    approvals: h('div', { class: 'approvals', 'data-testid': 'approvals' }),
    draft: h('div', { class: 'drafts' }),
    usage: h('div', { class: 'usage', 'data-testid': 'usage' }),
    timeline: h('tbody', { 'data-testid': 'timeline' }),
    steps: h('div', { class: 'steps', 'data-testid': 'steps' }),
    ledger: h('tbody', { 'data-testid': 'ledger' }),
    trace: h('div', { class: 'waterfall', 'data-testid': 'trace' }),
    scrubber: h('input', {
      type: 'range',
      min: 0,
      max: 0,
      value: 0,
      step: 1,
      'data-testid': 'scrubber',
      'aria-label': 'Replay: event seq',
    }),
    replayInfo: h('span', { 'data-testid': 'replay-info', class: 'replay-info' }),
    live: h('button', { type: 'button', 'data-testid': 'follow-live', disabled: true }, 'Follow live'),
    commands: h('pre', { class: 'commands', 'data-testid': 'commands', hidden: true }),
  };
  const cancelReason = h('input', {
    placeholder: 'reason (optional)',
    'aria-label': 'Cancel reason',
    'data-testid': 'cancel-reason',
  });
  const cancelButton = h('button', { type: 'button', class: 'danger', 'data-testid': 'cancel' }, 'Cancel run');
  // An operator's pause: the run stops before its next step, until resumed (its wait's Resume button).
  const pauseButton = h(
    'button',
    { type: 'button', 'data-testid': 'pause', title: 'Stop the run before its next step, until it is resumed' },
    'Pause',
  );
  // Undo the run's completed calls that have a compensator (newest first) before it ends.
  const cancelCompensate = h('input', { type: 'checkbox', 'data-testid': 'cancel-compensate' });
  const compensateLabel = h(
    'label',
    { class: 'compensate', title: "Undo the run's completed calls that have a compensator, newest first" },
    cancelCompensate,
    ' undo its calls',
  );
  const tabButtons = TABS.map((name) =>
    h(
      'button',
      { type: 'button', role: 'tab', id: `tab-${name}`, 'aria-controls': `panel-${name}`, 'data-tab': name },
      name[0]?.toUpperCase() + name.slice(1),
    ),
  );
  const panels = {
    timeline: h(
      'table',
      { class: 'timeline' },
      h('thead', {}, h('tr', {}, h('th', {}, 'seq'), h('th', {}, 'type'), h('th', {}, 'time'), h('th', {}, 'what'))),
      el.timeline,
    ),
    steps: el.steps,
    ledger: h(
      'table',
      { class: 'ledger' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['tool', 'effect', 'risk', 'arguments', 'status', 'attempts', 'result', 'recovery'].map((t) =>
            h('th', {}, t),
          ),
        ),
      ),
      el.ledger,
    ),
    trace: el.trace,
  };
  const panelWrap = Object.entries(panels).map(([name, panel]) =>
    h(
      'div',
      {
        class: 'tab-panel',
        'data-panel': name,
        role: 'tabpanel',
        id: `panel-${name}`,
        'aria-labelledby': `tab-${name}`,
        tabindex: 0,
      },
      panel,
    ),
  );
  const section = h(
    'section',
    { class: 'run', 'data-run': runId },
    h(
      'div',
      { class: 'run-head' },
      h('a', { href: '#/', class: 'back' }, '← Runs'),
      h('h2', { class: 'mono' }, runId),
      el.status,
      h(
        'div',
        { class: 'run-actions' },
        h('button', { type: 'button', 'data-testid': 'export', 'data-action': 'export' }, 'Export JSON'),
        h('button', { type: 'button', 'data-testid': 'copy-curl', 'data-action': 'curl' }, 'Copy as curl'),
        h('button', { type: 'button', 'data-testid': 'copy-baton', 'data-action': 'baton' }, 'Copy baton command'),
        pauseButton,
        h('span', { class: 'cancel-box' }, cancelReason, compensateLabel, cancelButton),
      ),
    ),
    el.commands,
    el.input,
    el.lineage,
    el.outcome,
    el.errors,
    el.approvals,
    el.draft,
    h(
      'div',
      { class: 'grid' },
      h(
        'div',
        { class: 'card chart-card' },
        chartElement,
        h('div', { class: 'replay' }, h('label', {}, 'Replay ', el.scrubber), el.replayInfo, el.live),
        el.replayFork,
      ),
      h('div', { class: 'card' }, h('h3', {}, 'Usage and budgets'), el.usage),
    ),
    h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Run details' }, ...tabButtons),
    ...panelWrap,
  );
  /** Shows one tab's panel; only the selected tab is in the Tab order (arrows move between tabs). @param {string} name */
  function selectTab(name) {
    for (const b of tabButtons) {
      const selected = b.dataset.tab === name;
      b.setAttribute('aria-selected', String(selected));
      b.tabIndex = selected ? 0 : -1;
    }
    for (const p of panelWrap) p.hidden = p.dataset.panel !== name;
  }
  for (const b of tabButtons) b.addEventListener('click', () => selectTab(b.dataset.tab ?? 'timeline'));
  tabButtons.forEach((b, i) =>
    b.addEventListener('keydown', (event) => {
      // The WAI-ARIA tabs pattern: Left/Right step (wrapping), Home/End jump; a moved-to tab is selected.
      const n = tabButtons.length;
      const moves = /** @type {Record<string, number>} */ ({
        ArrowLeft: (i - 1 + n) % n,
        ArrowRight: (i + 1) % n,
        Home: 0,
        End: n - 1,
      });
      const to = moves[event.key];
      const next = to === undefined ? undefined : tabButtons[to];
      if (!next) return;
      event.preventDefault();
      selectTab(next.dataset.tab ?? 'timeline');
      next.focus();
    }),
  );
  selectTab('timeline');
  const action = (/** @type {string} */ name) =>
    /** @type {HTMLButtonElement} */ (section.querySelector(`[data-action="${name}"]`));
  return {
    section,
    el,
    cancelReason,
    cancelCompensate,
    cancelButton,
    pauseButton,
    buttons: { export: action('export'), curl: action('curl'), baton: action('baton') },
  };
}
