// @ts-check
/**
 * The human side of the event fold: a question asked (`input_request`) and its answer
 * (`input_result`), what a wait asks of a person (the role, the expiry instant, the budget that
 * ran out), what the decider gave (edited arguments, an output, new limits), and a wait handed to
 * another role when it expired (`approval_result` with `escalated`). Pure, like `fold.js`.
 */

/** @typedef {import('./types.js').EventJson} EventJson */
/** @typedef {import('./types.js').FoldState} FoldState */
/** @typedef {import('./types.js').FoldApproval} FoldApproval */

/** @param {unknown} value @returns {string | null} */
function str(value) {
  return typeof value === 'string' ? value : null;
}

/** @param {unknown} value @returns {number | null} */
function instant(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * The terms of a wait from its `approval_request`: who decides, until when, and for a budget
 * wait which budget ran out at which step, with each limit and its use.
 * @param {Record<string, any>} data
 * @returns {Pick<FoldApproval, 'role' | 'expiresAt' | 'escalatedFrom' | 'budget' | 'question' | 'action' | 'given'>}
 */
export function waitTerms(data) {
  return {
    role: str(data.role),
    expiresAt: instant(data.expires_at),
    escalatedFrom: null,
    budget:
      data.reason === 'budget'
        ? {
            budget: String(data.budget ?? ''),
            stepIndex: Number(data.step_index ?? 0),
            limits: Array.isArray(data.limits) ? data.limits : [],
          }
        : null,
    question: null,
    action: null,
    given: null,
  };
}

/**
 * The state after a human-side event, or undefined when the event is not one (`fold.js` folds it).
 * @param {FoldState} state the state with the event's seq already set
 * @param {EventJson} event
 * @returns {FoldState | undefined}
 */
export function applyHumanEvent(state, event) {
  const data = /** @type {Record<string, any>} */ (event.data ?? {});
  switch (event.type) {
    case 'input_request': {
      const id = String(data.input_id);
      const from =
        data.from && typeof data.from === 'object'
          ? {
              tool: String(data.from.tool),
              ...(data.from.server !== undefined ? { server: String(data.from.server) } : {}),
              in_flight: data.from.in_flight === true,
            }
          : null;
      const question = {
        text: String(data.question ?? ''),
        choices: Array.isArray(data.choices) ? data.choices.map(String) : null,
        schema: data.schema && typeof data.schema === 'object' ? data.schema : null,
        from,
      };
      /** @type {FoldApproval} */
      const approval = {
        id,
        reason: 'input',
        toolCalls: [
          {
            id: String(data.tool_call_id),
            tool: from ? from.tool : 'human.ask',
            args: { question: question.text },
            risk: null,
            reason: null,
          },
        ],
        status: 'pending',
        decidedBy: null,
        decisionReason: null,
        votes: [],
        requestedSeq: event.seq,
        decidedSeq: null,
        ...waitTerms(data),
        question,
      };
      return { ...state, approvals: { ...state.approvals, [id]: approval } };
    }
    case 'input_result': {
      const id = String(data.input_id);
      const asked = state.approvals[id];
      if (!asked) return state;
      // `closed`: a question asked in flight whose call ended without it (a restart).
      const status =
        data.decision === 'expired' ? 'expired' : data.declined || data.decision === 'closed' ? 'rejected' : 'approved';
      const decided = {
        ...asked,
        status,
        decidedBy: str(data.by),
        decisionReason: str(data.reason),
        decidedSeq: event.seq,
        action: status === 'approved' ? 'answer' : null,
        given: status === 'approved' ? { answer: data.answer } : null,
      };
      return { ...state, approvals: { ...state.approvals, [id]: decided } };
    }
    case 'approval_result': {
      // Only an escalation is the human side's own; every other result is folded by `fold.js`.
      if (data.decision !== 'escalated') return undefined;
      const id = String(data.approval_id);
      const asked = state.approvals[id];
      if (!asked) return state;
      const escalated = {
        ...asked,
        role: str(data.role) ?? asked.role,
        escalatedFrom: str(data.from_role) ?? asked.role,
        expiresAt: null,
      };
      return { ...state, approvals: { ...state.approvals, [id]: escalated } };
    }
    default:
      return undefined;
  }
}

/**
 * What a final `approval_result` adds to its approval: the action taken (edit, respond, extend,
 * end) and what the decider gave.
 * @param {Record<string, any>} data
 * @returns {Pick<FoldApproval, 'action' | 'given'>}
 */
export function decisionGiven(data) {
  return { action: str(data.action), given: data.given ?? null };
}

/**
 * The run's limits and deadline after a final `approval_result`: an extension raises the limits
 * it names (and sets the new deadline); any other decision leaves them as they were.
 * @param {FoldState} state
 * @param {Record<string, any>} data
 * @returns {Pick<FoldState, 'limits' | 'deadlineAt'>}
 */
export function afterExtension(state, data) {
  if (data.action !== 'extend' || !data.given || typeof data.given !== 'object') {
    return { limits: state.limits, deadlineAt: state.deadlineAt };
  }
  const given = /** @type {{ limits?: Record<string, unknown>, deadline_at?: unknown }} */ (data.given);
  return {
    limits: { ...(state.limits ?? {}), ...(given.limits ?? {}) },
    deadlineAt: instant(given.deadline_at) ?? state.deadlineAt,
  };
}
