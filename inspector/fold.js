// @ts-check
/**
 * The event fold: a run's state at any seq, computed from its stored events alone (the chart's
 * lit state, the states visited and edges taken, the ledger, approvals, usage, and how calls
 * interrupted by a crash were resolved). Pure: no DOM, no requests, so replay can never call a
 * model or a tool, and the fold is unit-tested on its own.
 */

import { afterExtension, applyHumanEvent, decisionGiven, waitTerms } from './fold-human.js';

/** @typedef {import('./types.js').EventJson} EventJson */
/** @typedef {import('./types.js').FoldState} FoldState */
/** @typedef {import('./types.js').FoldCall} FoldCall */
/** @typedef {import('./types.js').Recovery} Recovery */

/** The states a run leaves only once it has ended. */
export const TERMINAL_STATES = ['succeeded', 'failed'];

/** How each recovery reads in the timeline. */
export const RECOVERY_LABELS = /** @type {const} */ ({
  rerun: 'outcome unknown: run again with the same idempotency key',
  reconciled: 'outcome unknown: found done by reconcile(), not run again',
  reconciled_not_done: 'outcome unknown: not found done by reconcile(), run again',
  to_human: 'outcome unknown: sent to a human',
  human_retry: 'run again because a human chose retry',
  followed: 'outcome unknown: its work goes on elsewhere (its saved handle), followed, not started again',
});

/** Why an outcome was unknown, as the events say it. */
export const CAUSE_LABELS = /** @type {const} */ ({
  interrupted: 'the process stopped mid-call',
  timed_out: 'it timed out',
  aborted: 'it was aborted',
  threw: 'it threw an unexpected error',
});

/** @returns {FoldState} the state before the first event. */
export function initialState() {
  return {
    seq: 0,
    status: 'pending',
    visited: ['pending'],
    edges: {},
    stepIndex: 0,
    stopReason: null,
    failure: null,
    waitReason: null,
    pendingApprovalId: null,
    input: null,
    sessionId: null,
    limits: null,
    deadlineAt: null,
    answer: null,
    usage: { steps: 0, llmCalls: 0, toolCalls: 0, tokens: 0, costUsd: 0 },
    calls: {},
    approvals: {},
    artifacts: [],
    recoveries: [],
    compensations: [],
    compensation: null,
  };
}

/** @param {unknown} value @returns {number} */
function num(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** @param {unknown} value @returns {string | null} */
function str(value) {
  return typeof value === 'string' ? value : null;
}

/** A planner's usage, in either spelling (`input_tokens` on the wire, `inputTokens` in older logs). */
/** @param {unknown} usage */
export function usageOf(usage) {
  const u = /** @type {Record<string, unknown>} */ (usage && typeof usage === 'object' ? usage : {});
  return {
    tokens: num(u.input_tokens ?? u.inputTokens) + num(u.output_tokens ?? u.outputTokens),
    costUsd: num(u.cost_usd ?? u.costUsd),
  };
}

/**
 * @param {FoldState} state
 * @param {string} id
 * @param {Partial<FoldCall>} patch
 * @returns {FoldState}
 */
function patchCall(state, id, patch) {
  /** @type {FoldCall} */
  const before = state.calls[id] ?? {
    id,
    tool: '',
    args: null,
    effect: null,
    risk: null,
    status: 'proposed',
    attempts: 0,
    ok: null,
    failure: null,
    durationMs: null,
    truncated: false,
    recovery: [],
  };
  const call = { ...before, ...patch };
  return { ...state, calls: { ...state.calls, [id]: call } };
}

/**
 * The state after one more event. Events must come in seq order; `draft` events (live only,
 * never stored) change nothing.
 * @param {FoldState} state
 * @param {EventJson} event
 * @returns {FoldState}
 */
export function applyEvent(state, event) {
  if (event.type === 'draft') return state;
  // A question and its answer, an escalation: the human side's own (`fold-human.js`).
  return applyHumanEvent({ ...state, seq: event.seq }, event) ?? applyLogEvent(state, event);
}

/**
 * @param {FoldState} state
 * @param {EventJson} event
 * @returns {FoldState}
 */
function applyLogEvent(state, event) {
  const data = /** @type {Record<string, any>} */ (event.data ?? {});
  let next = { ...state, seq: event.seq };
  switch (event.type) {
    case 'run.created':
      return {
        ...next,
        input: str(data.input),
        sessionId: str(data.session_id),
        limits: data.limits ?? null,
        deadlineAt: typeof data.deadline_at === 'number' ? data.deadline_at : null,
      };
    case 'state': {
      const from = str(data.from) ?? state.status;
      const to = str(data.to) ?? state.status;
      const key = `${from}>${to}`;
      return {
        ...next,
        status: to,
        stepIndex: num(data.step_index),
        visited: state.visited.includes(to) ? state.visited : [...state.visited, to],
        edges: { ...state.edges, [key]: (state.edges[key] ?? 0) + 1 },
        stopReason: str(data.stop_reason) ?? (TERMINAL_STATES.includes(to) ? state.stopReason : null),
        failure: data.failure ?? (TERMINAL_STATES.includes(to) ? state.failure : null),
        waitReason: str(data.wait_reason),
        pendingApprovalId: str(data.approval_id),
        compensation: data.compensation ?? state.compensation,
      };
    }
    case 'step': {
      const { tokens, costUsd } = usageOf(data.usage);
      const decision = data.decision ?? {};
      return {
        ...next,
        answer: decision.type === 'final' ? (str(decision.answer) ?? state.answer) : state.answer,
        usage: {
          ...state.usage,
          steps: state.usage.steps + 1,
          llmCalls: state.usage.llmCalls + 1,
          tokens: state.usage.tokens + tokens,
          costUsd: state.usage.costUsd + costUsd,
        },
      };
    }
    case 'action': {
      const id = String(data.tool_call_id);
      const first = !state.calls[id] || state.calls[id].attempts === 0;
      next = patchCall(next, id, {
        tool: String(data.tool),
        args: data.args ?? null,
        effect: str(data.effect),
        status: 'started',
        attempts: num(data.attempt) || (state.calls[id]?.attempts ?? 0) + 1,
        ok: null,
        failure: null,
        durationMs: null,
      });
      if (first) next = { ...next, usage: { ...next.usage, toolCalls: next.usage.toolCalls + 1 } };
      return withRecovery(next, event, id, str(data.tool), data.recovery);
    }
    case 'result': {
      const id = String(data.tool_call_id);
      next = patchCall(next, id, {
        tool: String(data.tool),
        status: str(data.status) ?? 'settled',
        ok: data.ok === true,
        failure: data.failure ?? null,
        durationMs: typeof data.duration_ms === 'number' ? data.duration_ms : null,
        truncated: data.truncated === true,
      });
      return withRecovery(next, event, id, str(data.tool), data.recovery);
    }
    case 'approval_request': {
      const id = String(data.approval_id);
      /** @type {any[]} */
      const calls = Array.isArray(data.tool_calls) ? data.tool_calls : [];
      for (const call of calls) {
        const known = next.calls[String(call.id)];
        next = patchCall(next, String(call.id), {
          tool: String(call.tool),
          args: call.args ?? null,
          risk: str(call.risk),
          status: data.reason === 'uncertain_side_effect' ? 'unknown' : (known?.status ?? 'awaiting_approval'),
        });
        if (data.recovery) next = withRecovery(next, event, String(call.id), str(call.tool), data.recovery);
      }
      const approval = {
        id,
        reason: String(data.reason ?? 'approval'),
        toolCalls: calls.map((c) => ({
          id: String(c.id),
          tool: String(c.tool),
          args: c.args ?? null,
          risk: str(c.risk),
          reason: str(c.reason),
        })),
        status: 'pending',
        decidedBy: null,
        decisionReason: null,
        votes: [],
        requestedSeq: event.seq,
        decidedSeq: null,
        ...waitTerms(data),
      };
      return { ...next, approvals: { ...next.approvals, [id]: approval } };
    }
    case 'approval_result': {
      const id = String(data.approval_id);
      const asked = next.approvals[id];
      if (!asked) return next;
      // A vote: the machine took the decision and still waits on this approval.
      if (data.final === false) {
        const vote = { by: str(data.by), decision: str(data.decision), reason: str(data.reason), seq: event.seq };
        return { ...next, approvals: { ...next.approvals, [id]: { ...asked, votes: [...asked.votes, vote] } } };
      }
      const decided = {
        ...asked,
        status: str(data.decision) ?? 'decided',
        decidedBy: str(data.by),
        decisionReason: str(data.reason),
        decidedSeq: event.seq,
        ...decisionGiven(data),
      };
      return { ...next, ...afterExtension(next, data), approvals: { ...next.approvals, [id]: decided } };
    }
    case 'compensation': {
      // A compensation's own row and events; the call it undoes says how that went.
      const entry = {
        seq: event.seq,
        toolCallId: String(data.tool_call_id),
        compensates: String(data.compensates),
        tool: String(data.tool),
        status: String(data.status),
        reason: str(data.reason),
        failure: data.failure ?? null,
      };
      const undone = next.calls[entry.compensates];
      if (undone) next = patchCall(next, entry.compensates, { compensation: entry.status });
      return { ...next, compensations: [...next.compensations, entry] };
    }
    case 'artifact':
      return {
        ...next,
        artifacts: [...next.artifacts, { sha256: String(data.sha256), size: num(data.size), seq: event.seq }],
      };
    default:
      return next;
  }
}

/**
 * @param {FoldState} state
 * @param {EventJson} event
 * @param {string} id
 * @param {string | null} tool
 * @param {unknown} how
 * @returns {FoldState}
 */
function withRecovery(state, event, id, tool, how) {
  if (typeof how !== 'string' || !(how in RECOVERY_LABELS)) return state;
  const recovery = /** @type {Recovery} */ (how);
  const cause = typeof event.data.cause === 'string' ? event.data.cause : null;
  const entry = { seq: event.seq, toolCallId: id, tool: tool ?? '', how: recovery, cause };
  const call = state.calls[id];
  const marked = call ? patchCall(state, id, { recovery: [...call.recovery, recovery] }) : state;
  return { ...marked, recoveries: [...state.recoveries, entry] };
}

/**
 * The state after every event with `seq <= upTo` (all of them by default).
 * @param {readonly EventJson[]} events in seq order
 * @param {number} [upTo]
 * @returns {FoldState}
 */
export function foldEvents(events, upTo = Number.POSITIVE_INFINITY) {
  let state = initialState();
  for (const event of events) {
    if (event.seq > upTo) break;
    state = applyEvent(state, event);
  }
  return state;
}

/**
 * The seqs where a run was picked up again after its process stopped mid-call: the event that
 * resolved the interrupted call (calls of a step run one at a time, so a crash interrupts one).
 * @param {FoldState} state
 * @returns {number[]}
 */
export function resumptionSeqs(state) {
  // Logs written before causes were recorded had recoveries after crashes only.
  return state.recoveries
    .filter((entry) => entry.how !== 'human_retry' && (entry.cause === 'interrupted' || entry.cause === null))
    .map((entry) => entry.seq);
}
