/**
 * A person's decisions on a run's waits, as `decide()` (and its shorthands `approve()`,
 * `reject()`, `answer()`) take them: the decision is checked first against the wait it is for
 * (its kind, the tool's input and output schemas, the question's answer schema, the limits
 * already used), so bad input changes nothing; a decided or expired wait always answers 409.
 * The run is then loaded here (claimed), the decision committed, and an API-only runtime hands
 * the run to a worker to act on it.
 */
import { DEFAULTS } from '../../defaults.js';
import type { ExtendedLimits } from '../../../machines/types.js';
import { BatonError, fail, quoteId } from '../../failure.js';
import type { ApprovalRow, RunRow, Store } from '../../store/index.js';
import { answerSchemaOf, type HumanAskInput } from '../../tools/human-ask.js';
import { agentNamed, agentOf, type RuntimeEnv } from '../drive/env.js';
import { approves, assertPendingApproval, decideApproval, type DecisionInput } from '../ledger/approvals.js';
import { decidedRow } from '../ledger/question-rows.js';
import { toolOf } from '../ledger/ledger.js';
import { asksInFlight, toApproval } from '../model/rows.js';
import {
  HUMAN_DECISIONS,
  type Approval,
  type ApproveInput,
  type HumanDecision,
  type RejectInput,
} from '../model/types.js';
import { assertWellFormed } from '../model/well-formed.js';
import type { RunRegistry } from './run-registry.js';

/** What deciding needs from its runtime. */
export interface DecisionsDeps {
  env: RuntimeEnv;
  registry: Pick<RunRegistry, 'load'>;
  /** False for an API-only runtime: the decision is recorded, a worker applies it. */
  drive: boolean;
  assertOpen(): void;
  /** Lets a worker drive the run, once the decision is durable (an API-only runtime). */
  handOffUnlessDriving(runId: string): Promise<void>;
}

/** The runtime's decision members (see `Runtime`). */
export interface Decisions {
  decide(runId: string, approvalId: string, decision: HumanDecision): Promise<Approval>;
  approve(runId: string, approvalId: string, decision: ApproveInput): Promise<Approval>;
  reject(runId: string, approvalId: string, decision: RejectInput): Promise<Approval>;
  answer(runId: string, inputId: string, answer: { answer: unknown; by: string; reason?: string }): Promise<Approval>;
}

/** Why a run cannot be loaded when another process took a decision on it first. */
const LOST_TO_ANOTHER: ReadonlySet<string> = new Set(['run.version_conflict', 'run.invalid_transition']);

/** Which decisions each kind of wait takes. */
const TAKES: Record<ApprovalRow['kind'], readonly HumanDecision['decision'][]> = {
  tool: ['approve', 'reject', 'edit', 'respond'],
  policy: ['approve', 'reject', 'edit', 'respond'],
  uncertain: ['approve', 'reject'],
  version: ['approve', 'reject'],
  input: ['answer', 'reject'],
  budget: ['extend', 'end'],
  // A fork's repeat of its source's effect: run it again (`retry`), take the source's result (`done`), or not.
  repeat: ['approve', 'reject'],
  // A child run's end decides it: no person does (a person decides the child's own waits).
  child: [],
  // The end of a call's work elsewhere (an MCP task), found by a poll, decides it.
  task: [],
  // An operator's pause: only `resume` (or a cancel, which is not a decision) ends it.
  pause: ['resume'],
};

/** A wait the runtime decides (a child run's end, a task's end): no person's decision counts. */
function refuseRuntimeWait(runId: string, pending: ApprovalRow): void {
  if (pending.kind === 'child') {
    const child = (JSON.parse(pending.request ?? '{}') as { child_run_id?: string }).child_run_id ?? '?';
    fail(
      'approval.wrong_decision',
      `Run '${runId}' waits on its child run '${child}': no person decides that wait; decide the wait the child shows (child_wait.asking), on either run`,
      { details: { kind: pending.kind, decisions: [], child_run_id: child } },
    );
  }
  if (pending.kind === 'task') {
    fail(
      'approval.wrong_decision',
      `Run '${runId}' waits for the work its call left running elsewhere (a task, polled by the runtime) to end: no person decides that wait; cancel the run to stop it`,
      { details: { kind: pending.kind, decisions: [] } },
    );
  }
}

function issuesOf(error: { issues: { path: PropertyKey[]; message: string; code?: string }[] }) {
  return error.issues.map((i) => ({ path: i.path.map(String), message: i.message, code: i.code }));
}

/** The one call of an approval a decision is about: the one named, or the approval's only call. */
function boundCall(approval: ApprovalRow, toolCallId: string | undefined, decision: string): string {
  const bound = JSON.parse(approval.tool_call_ids) as string[];
  if (toolCallId === undefined) {
    if (bound.length === 1) return bound[0]!;
    fail('input.invalid', `Approval '${approval.id}' binds ${bound.length} calls: '${decision}' needs a tool_call_id`, {
      details: { tool_call_ids: bound },
    });
  }
  if (!bound.includes(toolCallId)) {
    fail('input.invalid', `Call ${quoteId(toolCallId)} is not one approval '${approval.id}' asks about`, {
      details: { tool_call_ids: bound },
    });
  }
  return toolCallId;
}

/** The tool a call of the run's ledger or journal names (a tool of the agent that planned its step). */
async function toolOfCall(env: RuntimeEnv, runId: string, stepIndex: number, callId: string) {
  const run = await env.store.getRun(runId);
  const step = (await env.store.listSteps(runId)).find((s) => s.step_index === stepIndex);
  const agent = (step?.agent ? agentNamed(env, step.agent) : undefined) ?? agentOf(env, { agent: run?.agent ?? null });
  const decision = step ? (JSON.parse(step.decision) as { type: string; calls?: { tool: string }[] }) : null;
  const index = Number(callId.slice(callId.lastIndexOf('.c') + 2));
  const name = decision?.calls?.[index]?.tool;
  const tool = name === undefined ? undefined : toolOf(agent, name);
  if (!tool) fail('tool.not_found', `The tool of call ${quoteId(callId)} is not one this runtime has`);
  return tool;
}

/** `run.agent_mismatch` when the step was planned by an agent (handed the run) this runtime does not have. */
async function assertStepAgent(env: RuntimeEnv, runId: string, stepIndex: number): Promise<void> {
  const step = (await env.store.listSteps(runId)).find((s) => s.step_index === stepIndex);
  if (!step?.agent || agentNamed(env, step.agent)) return;
  // A run of another agent altogether is refused as such when it is loaded (`agentMismatchOf`).
  if (step.agent === (await env.store.getRun(runId))?.agent) return;
  fail(
    'run.agent_mismatch',
    `Step ${stepIndex} of run '${runId}' was planned by agent '${step.agent}', which this runtime does not have: decide it where that agent runs`,
    { details: { run_id: runId, step_agent: step.agent, runtime_agent: env.name } },
  );
}

/** The limits an `extend` sets, checked against what the run has used (none may be lower). */
function checkExtend(approval: ApprovalRow, run: RunRow, limits: HumanDecision & { decision: 'extend' }) {
  const given = limits.limits ?? {};
  const used: Record<string, number> = {
    maxSteps: run.step_index,
    maxLlmCalls: run.llm_calls,
    maxToolCalls: run.tool_calls,
    maxTokens: run.tokens,
    maxCostUsd: run.cost_usd,
  };
  const extended: ExtendedLimits = {};
  for (const [key, value] of Object.entries(given)) {
    if (key === 'timeoutMs') continue;
    if (!(key in used)) fail('input.invalid', `'${key}' is not a limit an extension can raise`, { details: { key } });
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      fail('input.invalid', `'${key}' must be a number of 0 or more`, { details: { key } });
    }
    if (value < used[key]!) {
      fail('input.invalid', `'${key}' ${value} is lower than what the run has used already (${used[key]})`, {
        details: { key, limit: value, used: used[key] },
      });
    }
    extended[key as keyof ExtendedLimits] = value;
  }
  const request = JSON.parse(approval.request ?? '{}') as { budget?: string };
  const timeoutMs = given.timeoutMs;
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs <= 0)) {
    fail('input.invalid', "'timeoutMs' must be a positive whole number of milliseconds");
  }
  const ran = request.budget;
  const key = ran === 'timeout' ? 'timeoutMs' : camel(ran ?? '');
  const raised =
    ran === 'timeout' ? timeoutMs !== undefined : (extended[key as keyof ExtendedLimits] ?? -1) > used[key]!;
  if (!raised) {
    fail('input.invalid', `The run waits on its ${ran} budget: the extension must raise '${key}' past what is used`, {
      details: { budget: ran, used: used[key] ?? null },
    });
  }
  return { limits: extended, ...(timeoutMs !== undefined ? { deadlineAt: Date.now() + timeoutMs } : {}) };
}

function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * A decision on a question whose call waits in flight in another runtime (it holds the run):
 * written to the wait's row, single use; that runtime reads it there and hands it to the call.
 */
async function decideInFlight(env: RuntimeEnv, pending: ApprovalRow, input: DecisionInput): Promise<Approval> {
  if (pending.expires_at !== null && pending.expires_at <= Date.now()) {
    fail('approval.expired', `Input '${pending.id}' expired: no answer counts any more`, {
      details: { status: pending.status, expires_at: pending.expires_at },
    });
  }
  const decided = {
    status: approves(input) ? ('approved' as const) : ('rejected' as const),
    resolution: input.decision === 'answer' ? ('answer' as const) : null,
    by: input.by,
    reason: input.reason,
    at: Date.now(),
    answer: input.decision === 'answer' ? JSON.stringify({ answer: input.answer }) : null,
    args_hash: pending.args_hash,
  };
  if (!(await env.store.decideInFlight(pending.id, decided))) {
    await assertPendingApproval(env.store, pending.run_id, pending.id);
    fail('approval.already_decided', `Input '${pending.id}' was already decided`);
  }
  return toApproval(decidedRow(pending, decided));
}

/**
 * The run a wait belongs to when a decision names it on `runId`: `runId` itself, or a run below
 * it (its child, its child's child…), whose wait the parent shows. Any other run's wait is not
 * found on `runId` (the check that follows says so).
 */
async function ownerBelow(store: Store, runId: string, approvalId: string): Promise<string> {
  const approval = await store.getApproval(approvalId);
  if (!approval || approval.run_id === runId) return runId;
  let row = await store.getRun(approval.run_id);
  for (let depth = 0; row?.parent_run_id && depth < DEFAULTS.treeWalkSteps; depth += 1) {
    if (row.parent_run_id === runId) return approval.run_id;
    row = await store.getRun(row.parent_run_id);
  }
  return runId;
}

/** Creates the decision members of a runtime. */
export function createDecisions(deps: DecisionsDeps): Decisions {
  const { env, registry, drive } = deps;

  /**
   * The run, loaded to take the decision. A wait another process decided since it was checked
   * answers as any decided wait does (409): that process drives the run, or has ended it, which
   * is not what this decider needs to hear.
   */
  async function load(runId: string, approvalId: string, input: DecisionInput) {
    try {
      return await registry.load(
        runId,
        input.decision === 'reject' || input.decision === 'end' ? 'rejected' : 'approved',
      );
    } catch (error) {
      if (error instanceof BatonError && LOST_TO_ANOTHER.has(error.code)) {
        await assertPendingApproval(env.store, runId, approvalId);
      }
      throw error;
    }
  }

  async function apply(runId: string, approvalId: string, input: DecisionInput, pending: ApprovalRow) {
    let run;
    try {
      run = await load(runId, approvalId, input);
    } catch (error) {
      // The call that asks is in flight in the runtime that holds the run: it takes the answer.
      const elsewhere = error instanceof BatonError && error.code === 'run.version_conflict';
      if (elsewhere && asksInFlight(pending)) return decideInFlight(env, pending, input);
      throw error;
    }
    let row;
    try {
      row = await decideApproval(env, run, approvalId, input, { apply: drive });
    } catch (error) {
      // Another decision won while this one waited for the run, and the run ended on it: the
      // wait was decided, which is what this decider needs to hear (as when the load lost).
      if (error instanceof BatonError && error.code === 'run.invalid_transition') {
        await assertPendingApproval(env.store, runId, approvalId);
      }
      throw error;
    }
    await deps.handOffUnlessDriving(runId);
    return toApproval(row);
  }

  /** The decision as the ledger applies it, once it is checked against its wait. */
  async function check(runId: string, pending: ApprovalRow, decision: HumanDecision): Promise<DecisionInput> {
    const base = { decision: decision.decision, by: decision.by, reason: decision.reason ?? null };
    switch (decision.decision) {
      case 'approve':
        if (decision.resolution !== undefined && pending.kind !== 'uncertain' && pending.kind !== 'repeat') {
          fail(
            'input.invalid',
            `Approval '${pending.id}' asks whether to run calls: 'resolution' applies only to an uncertain side effect or a repeated one`,
            { details: { resolution: decision.resolution } },
          );
        }
        return { ...base, resolution: decision.resolution };
      case 'reject':
        return { ...base, terminate: decision.terminate, compensate: decision.compensate };
      case 'end':
      case 'resume':
        return base;
      case 'edit': {
        const toolCallId = boundCall(pending, decision.toolCallId, 'edit');
        const tool = await toolOfCall(env, runId, pending.step_index, toolCallId);
        if (tool.allowEdit === false) {
          fail('approval.edit_not_allowed', `Tool '${tool.name}' does not let a person edit its arguments`, {
            details: { tool: tool.name },
          });
        }
        const parsed = tool.input.safeParse(decision.args);
        if (!parsed.success) {
          fail('input.invalid', `The edited arguments do not fit tool '${tool.name}'`, {
            details: { issues: issuesOf(parsed.error) },
          });
        }
        // What the tool's schema makes of them is what runs and what the ledger records (keys
        // it drops are not kept, defaults it adds are shown).
        return { ...base, edit: { toolCallId, args: parsed.data } };
      }
      case 'respond': {
        const toolCallId = boundCall(pending, decision.toolCallId, 'respond');
        const tool = await toolOfCall(env, runId, pending.step_index, toolCallId);
        const parsed = tool.output?.safeParse(decision.output);
        if (parsed && !parsed.success) {
          fail('input.invalid', `The output does not fit tool '${tool.name}'`, {
            details: { issues: issuesOf(parsed.error) },
          });
        }
        return { ...base, respond: { toolCallId, output: decision.output } };
      }
      case 'answer': {
        const parsed = answerSchemaOf(JSON.parse(pending.request ?? '{}') as HumanAskInput).safeParse(decision.answer);
        if (!parsed.success) {
          fail('input.invalid', `The answer does not fit the question's schema`, {
            details: { issues: issuesOf(parsed.error) },
          });
        }
        return { ...base, answer: decision.answer };
      }
      case 'extend': {
        const run = await env.store.getRun(runId);
        return { ...base, extend: checkExtend(pending, run!, decision) };
      }
    }
  }

  async function decide(runId: string, approvalId: string, decision: HumanDecision): Promise<Approval> {
    deps.assertOpen();
    if (typeof approvalId !== 'string' || approvalId === '') {
      fail('input.invalid', `A decision needs the id of the wait it decides, not ${JSON.stringify(approvalId)}`);
    }
    assertWellFormed(decision, 'The decision');
    if (!(HUMAN_DECISIONS as readonly string[]).includes((decision as { decision?: unknown }).decision as string)) {
      fail('input.invalid', `Unknown decision '${String((decision as { decision?: unknown }).decision)}'`, {
        details: { decisions: HUMAN_DECISIONS },
      });
    }
    if (typeof decision.by !== 'string' || decision.by === '') fail('input.invalid', "A decision needs 'by'");
    // A wait of a child run (or its child's) that the parent shows is decided on either id.
    runId = await ownerBelow(env.store, runId, approvalId);
    const pending = await assertPendingApproval(env.store, runId, approvalId);
    refuseRuntimeWait(runId, pending);
    // A step planned by an agent this runtime lacks (a handoff's) is decided where that agent is.
    await assertStepAgent(env, runId, pending.step_index);
    if (!TAKES[pending.kind].includes(decision.decision)) {
      fail(
        'approval.wrong_decision',
        `${pending.kind === 'input' ? 'Input' : 'Approval'} '${approvalId}' (${pending.kind}) takes ${TAKES[pending.kind].join(', ')}, not '${decision.decision}'`,
        { details: { kind: pending.kind, decisions: TAKES[pending.kind] } },
      );
    }
    return apply(runId, approvalId, await check(runId, pending, decision), pending);
  }

  return {
    decide,
    /** Approves a pending approval (for an uncertain call, `resolution` says retry or record as done). */
    approve: (runId, approvalId, decision) => decide(runId, approvalId, { ...decision, decision: 'approve' }),
    /** Rejects a pending approval: the model is told, or with `terminate` the run ends `rejected`. */
    reject: (runId, approvalId, decision) => decide(runId, approvalId, { ...decision, decision: 'reject' }),
    /** Answers a run's question. */
    answer: (runId, inputId, answer) => decide(runId, inputId, { ...answer, decision: 'answer' }),
  };
}
