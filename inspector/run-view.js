// @ts-check
/**
 * One run: its chart, timeline, steps, ledger, trace, usage and approvals, live from the run's
 * event stream; a scrubber that replays the run at any seq from its stored events (read-only:
 * it folds events already on the page and sends nothing); every human decision (approve, reject,
 * edit, respond, answer, extend, end) and cancel through the API; export and shell commands.
 */
import { ApiError, get } from './api.js';
import { createChart } from './chart.js';
import { fill } from './dom.js';
import { applyEvent, foldEvents, initialState, resumptionSeqs, TERMINAL_STATES } from './fold.js';
import { showError } from './notices.js';
import { decisionRequests, renderApprovals } from './run-approvals.js';
import { renderDraft, renderOutcome, renderUsage, usageOfRun, withDraft } from './run-panels.js';
import { ledgerRows } from './run-ledger.js';
import { wireCancel, wirePause } from './run-cancel.js';
import { wireExportButtons } from './run-export.js';
import { createRunLayout } from './run-layout.js';
import { renderLedger, renderReplay, renderSteps, renderTrace, timelineRows } from './run-tables.js';
import { forkControl, forksOf, renderLineage } from './run-fork.js';
import { openStream } from './stream.js';

/** @typedef {import('./types.js').EventJson} EventJson */
/** @typedef {import('./types.js').RunJson} RunJson */
/** @typedef {import('./types.js').FoldState} FoldState */

const REFRESH_MS = 400;
/** How often a run waiting on its child run is read again (the child's progress writes nothing of the parent's). */
const CHILD_POLL_MS = 1_000;

/**
 * Mounts a run's view; the returned function unmounts it.
 * @param {HTMLElement} root
 * @param {string} runId
 * @param {import('./types.js').MachineDescription} machine
 * @param {(status: 'connecting' | 'live' | 'reconnecting' | 'ended', detail?: string) => void} onConnection
 * @returns {() => void}
 */
export function mountRunView(root, runId, machine, onConnection) {
  const id = encodeURIComponent(runId);
  const chart = createChart(machine);
  const { section, el, cancelReason, cancelCompensate, cancelButton, pauseButton, buttons } = createRunLayout(
    runId,
    chart.element,
  );
  fill(root, section);

  /** @type {RunJson | null} */
  let run = null;
  /** @type {EventJson[]} */
  const events = [];
  let live = initialState();
  /** @type {number | null} null: following the run live */
  let replaySeq = null;
  let approvals = /** @type {import('./types.js').ApprovalJson[]} */ ([]);
  let toolCalls = /** @type {import('./types.js').ToolCallJson[]} */ ([]);
  /** @type {import('./run-panels.js').Draft | null} */
  let draft = null;
  let gone = false;
  const shownResumptions = new Set();
  /** Each journaled step's decision, by step: what a fork form starts from. @type {Map<number, unknown>} */
  const decisions = new Map();
  /** @type {RunJson[]} */
  let forks = [];
  /** The step the replay's fork control is for (null: none shown). @type {number | null} */
  let replayForkStep = null;

  /** The "Fork from here" control of a step, in `where` (steps, timeline, replay). */
  const forkFor = (/** @type {string} */ where) => (/** @type {number} */ stepIndex) =>
    forkControl({ runId, stepIndex, decision: () => decisions.get(stepIndex) ?? null, errors: el.errors, where });

  /** The state on screen: the live one, or the one at the scrubber's seq. */
  function viewState() {
    return replaySeq === null ? live : foldEvents(events, replaySeq);
  }

  function renderState() {
    const state = viewState();
    chart.update(state);
    const status = replaySeq === null && run ? run.status : state.status;
    el.status.textContent = status.replace('_', ' ');
    el.status.className = `badge ${status}`;
    el.status.dataset.status = status;
    const ended = TERMINAL_STATES.includes(status);
    cancelButton.disabled = ended || replaySeq !== null;
    cancelReason.disabled = cancelButton.disabled;
    cancelCompensate.disabled = cancelButton.disabled;
    // Paused, or asked to pause and not there yet: the run's wait (or its status) says so.
    const asked = replaySeq === null && run?.pause_requested ? run.pause_requested : null;
    const paused = replaySeq === null && run?.wait_reason === 'paused';
    pauseButton.disabled = cancelButton.disabled || status === 'queued' || paused || asked !== null;
    pauseButton.textContent = asked ? 'Pausing…' : paused ? 'Paused' : 'Pause';
    pauseButton.dataset.state = asked ? 'asked' : paused ? 'paused' : 'none';
    renderReplay(el, events.at(-1)?.seq ?? 0, replaySeq, state.status);
    // In replay, a fork from the step the replay shows (made again only when that step changes).
    const replayStep = replaySeq === null ? null : state.stepIndex;
    if (replayStep !== replayForkStep) {
      replayForkStep = replayStep;
      fill(el.replayFork, replayStep === null ? null : forkFor('replay')(replayStep));
    }
    const usage = replaySeq === null && run ? usageOfRun(run) : state.usage;
    renderUsage(el.usage, usage, state.limits, run?.deadline_at ?? state.deadlineAt, ended);
    renderLedger(el.ledger, ledgerRows(state, replaySeq === null ? toolCalls : []));
    const following = replaySeq === null;
    const actions = { live: following, decide, answer, resume, errors: el.errors };
    renderApprovals(el.approvals, { ...state, status }, approvals, following ? toolCalls : [], actions);
    if (run && replaySeq === null) renderOutcome(el, run);
    if (run) renderLineage(el.lineage, run, forks, replaySeq === null ? decideBelow : undefined);
  }

  /** @param {EventJson} event */
  function onEvent(event) {
    if (event.type === 'draft') {
      draft = withDraft(draft, event);
      renderDraft(el.draft, draft);
      return;
    }
    events.push(event);
    live = applyEvent(live, event);
    const start = events[0]?.created_at ?? event.created_at;
    const resumed = resumptionSeqs(live).includes(event.seq) && !shownResumptions.has(event.seq);
    if (resumed) shownResumptions.add(event.seq);
    el.timeline.append(...timelineRows(event, start, resumed, forkFor('timeline')));
    if (event.type === 'step' && draft && draft.step === Number(event.data.step_index)) {
      draft = { ...draft, committed: true };
      renderDraft(el.draft, draft);
    }
    scheduleRefresh();
    renderSoon();
  }

  // Rendering and reloading are batched: a burst of events costs one render and one reload.
  let renderQueued = false;
  function renderSoon() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => {
      renderQueued = false;
      if (!gone) renderState();
    });
  }

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let refreshTimer;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let childPoll;
  function scheduleRefresh() {
    refreshTimer ??= setTimeout(() => {
      refreshTimer = undefined;
      void refresh();
    }, REFRESH_MS);
  }

  async function refresh() {
    const upTo = events.at(-1)?.seq ?? 0;
    try {
      // The trace carries the run and its steps too: three requests reload the whole view.
      const [t, a, c, f] = await Promise.all([
        get(`/v1/runs/${id}/trace`),
        get(`/v1/runs/${id}/approvals`),
        get(`/v1/runs/${id}/tool-calls`),
        forksOf(runId),
      ]);
      if (gone) return;
      run = t.run;
      approvals = a.approvals;
      toolCalls = c.tool_calls;
      forks = f;
      for (const step of t.steps) decisions.set(step.step_index, step.decision);
      renderSteps(el.steps, t.steps, forkFor('steps'));
      renderTrace(el.trace, t.spans);
      renderState();
      // What the API data on the page reflects, for whoever waits for the page to settle.
      if (refreshTimer === undefined) section.dataset.syncedSeq = String(upTo);
      // Waiting on a child, the run writes nothing while the child works or asks: read again.
      if (t.run.status === 'waiting_human' && t.run.wait_reason === 'child') {
        clearTimeout(childPoll);
        childPoll = setTimeout(() => void refresh(), CHILD_POLL_MS);
      }
      return undefined;
    } catch (error) {
      if (!gone) showError(error, el.errors);
      return error;
    }
  }

  const { decide, answer, resume } = decisionRequests(runId, refresh);
  /** A decision on a wait down the tree, named on this run's id (the server finds the run that asks). */
  const decideBelow = (/** @type {string} */ approvalId, /** @type {Record<string, unknown>} */ body) =>
    decide(approvalId, body).catch((/** @type {unknown} */ error) => showError(error, el.errors));

  wireCancel(
    { button: cancelButton, reason: cancelReason, compensate: cancelCompensate },
    el.errors,
    runId,
    (ended) => {
      run = ended;
      renderState();
    },
  );
  wirePause(pauseButton, el.errors, runId, (asked) => {
    run = asked;
    renderState();
  });
  wireExportButtons(buttons, el, runId, events);

  el.scrubber.addEventListener('input', () => {
    const last = events.at(-1)?.seq ?? 0;
    const seq = Number(el.scrubber.value);
    replaySeq = seq >= last && !TERMINAL_STATES.includes(live.status) ? null : seq;
    renderState();
  });
  el.live.addEventListener('click', () => {
    replaySeq = null;
    renderState();
  });

  const stream = openStream({
    path: `/v1/runs/${id}/events`,
    after: 0,
    resumable: true,
    onEvent,
    onStatus: onConnection,
    isEnd: (event) => event.type === 'state' && TERMINAL_STATES.includes(String(event.data.to)),
  });
  void refresh().then((error) => {
    // A run of another tenant (or none) answers 404: say so instead of waiting for its stream.
    if (!run && error instanceof ApiError && (error.status === 404 || error.status === 403)) stream.close();
  });
  return () => {
    gone = true;
    stream.close();
    clearTimeout(refreshTimer);
    clearTimeout(childPoll);
  };
}
