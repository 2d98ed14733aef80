/**
 * The `planner` actor: one planning step. A journaled answer is replayed without asking again;
 * otherwise budgets are checked before the call, and the answer is staged with the transition
 * it causes (a crash before that commit only costs a second question, never a side effect).
 */
import { fromPromise } from 'xstate';
import type { PlannerActorInput, PlannerOutcome, Usage } from '../../../machines/types.js';
import { createFailure, toFailure } from '../../failure.js';
import {
  plannerDecisionSchema,
  type Decision,
  type PlannerDecision,
  type PlannerImage,
  type PlannerMessage,
  type PlannerRequest,
} from '../../planner/types.js';
import type { ContextReport } from '../model/types.js';
import { HUMAN_ASK } from '../../tools/human-ask.js';
import type { AgentEnv, LiveRun, RuntimeEnv } from '../drive/env.js';
import { plannerAgent } from './handoffs.js';
import { plannerMemory } from './memory-calls.js';
import { memoryAccessOf } from '../../tools/memory-tools.js';
import { failpoint } from '../model/failpoints.js';
import { buildContext, createTranscript } from './context-builder.js';
import { toUsageData } from '../model/event-data.js';
import { stepTurn } from '../drive/yield-turn.js';
import { passGates, plannerGates, throttledData } from './call-limits.js';
import type { LimitGate } from '../drive/limiter.js';

function summarize(decision: Decision): Record<string, unknown> {
  return decision.type === 'final'
    ? { type: 'final', answer: decision.answer }
    : { type: 'tool_calls', tools: decision.calls.map((c) => c.tool), text: decision.text ?? null };
}

/** A planner's decision as journaled: a question is a call of `human.ask`, so it goes through the ledger. */
function journaledDecision(decision: PlannerDecision): Decision {
  if (decision.type !== 'ask') return decision;
  const args = {
    question: decision.question,
    ...(decision.choices ? { choices: decision.choices } : {}),
    ...(decision.schema ? { schema: decision.schema } : {}),
  };
  return { type: 'tool_calls', calls: [{ tool: HUMAN_ASK, args }], ...(decision.text ? { text: decision.text } : {}) };
}

/**
 * True when the step a decision starts makes a commit before anything is done that matters to a
 * restored run: the run's end (a final answer), a question's wait, or a call that is not `read`,
 * whose `started` row is durable before its effect (an approval it needs, or a policy's denial,
 * commits with its wait or its outcome). The decision then commits with that write, and a crash
 * before it has done nothing with the decision: the model is asked again. A step of `read` calls
 * only makes no such commit before the next model call: its decision commits on its own.
 */
function committedByStep(agent: AgentEnv, decision: Decision): boolean {
  if (decision.type === 'final') return true;
  return decision.calls.some((call) => {
    if (call.tool === HUMAN_ASK) return true;
    const tool = agent.tools.get(call.tool);
    // Calls the runtime runs itself are not: a child run is created in a commit of its own, and a
    // handoff or a memory write commits with the step's end, after the next model call.
    return tool !== undefined && tool.effect !== 'read' && !tool.delegate && !tool.handoff && !memoryAccessOf(tool);
  });
}

/** The versions of the (known) tools a decision calls, by name. */
function versionsOf(agent: AgentEnv, calls: readonly { tool: string }[]): Record<string, string> {
  const versions: Record<string, string> = {};
  for (const call of calls) {
    const tool = agent.tools.get(call.tool);
    if (tool) versions[call.tool] = tool.version;
  }
  return versions;
}

/** Fills in the bytes (base64) of the images tool messages name, from their artifacts; an image whose artifact is gone is left out. */
async function withImageData(env: RuntimeEnv, live: LiveRun, messages: PlannerMessage[]): Promise<void> {
  if (!messages.some((message) => message.role === 'tool' && message.images)) return;
  // An image of the last step may still be staged with the run's next commit (a `read` call's
  // result is not flushed on its own): made durable first, so the store has it.
  await live.driver.flush();
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'tool' || !message.images) continue;
    const images: PlannerImage[] = [];
    for (const image of message.images) {
      const row = await env.store.getArtifact(image.sha256);
      if (row) images.push({ ...image, data: Buffer.from(row.content).toString('base64') });
    }
    messages[index] = { ...message, images };
  }
}

/** The planner's answer to one step's request, journaled as a decision; a failure as the run's `plan_error`. */
async function askPlanner(
  env: RuntimeEnv,
  agent: AgentEnv,
  live: LiveRun,
  request: Omit<PlannerRequest, 'onDraft'>,
  report: ContextReport,
): Promise<{ decision: Decision; usage: Usage } | PlannerOutcome> {
  const { stepIndex, signal, runId } = request;
  // Over a planner limit (the model API's, per key), the call waits here first.
  const gates = plannerGates(env.plannerLimits, { runId, context: request.context, agent: agent.name });
  const who = { planner: agent.name, step_index: stepIndex };
  const passed = gates.length > 0 ? await passGates(env, live, gates, `${runId}#${stepIndex}`, signal, who) : null;
  if (gates.length > 0 && !passed) {
    return { type: 'plan_error', failure: createFailure('run.cancelled', 'Planning was aborted') };
  }
  try {
    const response = await agent.planner.next({
      ...request,
      onDraft: (text, info) => live.driver.publishDraft({ step_index: stepIndex, text, attempt: info?.attempt ?? 1 }),
      // A 429 from the model API backs the planner's keys off for every runtime.
      ...(gates.length > 0
        ? { onRateLimited: (retryAfterMs?: number) => plannerBackOff(env, live, gates, who, retryAfterMs) }
        : {}),
    });
    if (gates.length > 0) env.limiter.cleared(gates);
    const parsed = plannerDecisionSchema.safeParse(response.decision);
    if (!parsed.success) {
      const failure = createFailure(
        'planner.invalid_output',
        `Planner returned an invalid decision at step ${stepIndex}`,
        {
          details: { issues: parsed.error.issues },
        },
      );
      return { type: 'plan_error', failure };
    }
    report.notes.push(...(response.contextNotes ?? []));
    report.attempts = response.attempts ?? 1;
    return { decision: journaledDecision(parsed.data), usage: response.usage };
  } catch (error) {
    if (signal.aborted) return { type: 'plan_error', failure: createFailure('run.cancelled', 'Planning was aborted') };
    return { type: 'plan_error', failure: toFailure(error, 'planner.failed') };
  } finally {
    await passed?.release();
  }
}

/** A 429 from the model API: the planner's keys back off for every runtime, told as `throttled`. */
async function plannerBackOff(
  env: RuntimeEnv,
  live: LiveRun,
  gates: LimitGate[],
  who: Record<string, unknown>,
  retryAfterMs: number | undefined,
): Promise<void> {
  const waitMs = await env.limiter.backOff(gates, retryAfterMs);
  live.driver.emit(
    'throttled',
    throttledData({ why: 'backoff', scope: gates[0]!.scope, key: gates[0]!.key, waitMs }, who),
  );
}

/** The event of a planned step (`given`: a fork's decision given by a person, no model call). */
function planReady(stepIndex: number, usage: Usage, decision: Decision, given: boolean): PlannerOutcome {
  return { type: 'plan_ready', stepIndex, usage, final: decision.type === 'final', ...(given ? { given } : {}) };
}

/** Creates the planner actor logic for a runtime. */
export function createPlannerActor(env: RuntimeEnv) {
  return fromPromise<PlannerOutcome, PlannerActorInput>(async ({ input, signal }) => {
    // Now and then a step begins on a new turn of the event loop, so a run whose planner and
    // tools never wait still commits as it goes and lets everything else run (`yield-turn.ts`).
    // Awaiting at all keeps this step's events after the `state` event of entering `planning`.
    const { runId, stepIndex, limits } = input;
    await stepTurn(stepIndex);
    await env.hooks?.beforeActor?.({ actor: 'planner', runId, stepIndex, signal });
    const live = env.live(runId);
    // A fork's step given its decision when it was forked: no model is asked, nothing is spent.
    const given = live.fork && live.fork.step === stepIndex ? live.fork.decision : null;
    const journaled = live.driver.memory.journal.get(stepIndex);
    if (journaled) {
      // Answered before a crash: replayed, never asked again.
      const { decision, usage } = journaled;
      return planReady(stepIndex, usage, decision, given !== null);
    }
    if (!given && limits.maxLlmCalls !== null && input.llmCalls >= limits.maxLlmCalls) {
      return { type: 'budget_exceeded', budget: 'max_llm_calls' };
    }
    const { messages, report } = buildContext(
      (live.history ??= await env.store.listMessages(live.sessionId)),
      { id: runId, input: live.input },
      stepIndex,
      live.driver.memory,
      env.contextTokens,
      (live.transcript ??= createTranscript()),
    );
    // The agent on top of the run's handoff stack plans (the run's own when nothing was handed over).
    const planning = plannerAgent(env, live, input.handoffStack ?? []);
    if ('failure' in planning) return { type: 'plan_error', failure: planning.failure };
    const { agent } = planning;
    if (planning.note) report.notes.push(planning.note);
    // A model that accepts images gets the bytes of those the context names (read outside any write).
    if (agent.planner.images) await withImageData(env, live, messages);
    // An agent with memory reads it as of a version recorded with the step (`memory-calls.ts`).
    const memory = await plannerMemory(env, live, agent, stepIndex);
    if (memory) {
      const entries = Object.keys(memory.session ?? {}).length + Object.keys(memory.tenant ?? {}).length;
      report.memory = { version: memory.version, entries };
    }
    const request = {
      runId,
      stepIndex,
      input: live.input,
      messages,
      tools: planning.tools,
      context: live.context,
      agent: agent.name,
      ...(memory ? { memory } : {}),
    };
    // Budgets are checked against what the next call may cost, so usage does not overshoot.
    const estimate = given ? undefined : agent.planner.estimate?.(request);
    if (!given && limits.maxTokens != null) {
      const next = estimate ? estimate.inputTokens + estimate.maxOutputTokens : 0;
      if (estimate ? input.tokens + next > limits.maxTokens : input.tokens >= limits.maxTokens) {
        return { type: 'budget_exceeded', budget: 'max_tokens' };
      }
    }
    if (!given && limits.maxCostUsd != null) {
      const next = estimate?.maxCostUsd ?? 0;
      if (next > 0 ? input.costUsd + next > limits.maxCostUsd : input.costUsd >= limits.maxCostUsd) {
        return { type: 'budget_exceeded', budget: 'max_cost_usd' };
      }
    }
    let decision: Decision;
    let usage: Usage;
    if (given) {
      decision = given;
      usage = { inputTokens: 0, outputTokens: 0 };
      report.notes.push(
        `Decision given by ${live.fork?.by ?? 'the caller'} when the run was forked; no model was asked`,
      );
    } else {
      const answer = await askPlanner(env, agent, live, { ...request, signal }, report);
      if ('type' in answer) return answer;
      ({ decision, usage } = answer);
    }
    failpoint('planner.answered');
    if (signal.aborted) return { type: 'plan_error', failure: createFailure('run.cancelled', 'Planning was aborted') };
    // The versions of the tools it was offered: a call of this decision runs with these, or asks.
    const toolVersions = decision.type === 'final' ? null : versionsOf(agent, decision.calls);
    const memoryVersion = memory?.version ?? null;
    live.driver.memory.journal.set(stepIndex, { decision, usage, toolVersions, agent: agent.name, memoryVersion });
    live.driver.stage((writer) =>
      writer.insertStep({
        run_id: runId,
        step_index: stepIndex,
        decision: JSON.stringify(decision),
        usage: JSON.stringify(usage),
        context: JSON.stringify(report),
        tool_versions: toolVersions === null ? null : JSON.stringify(toolVersions),
        agent: agent.name,
        memory_version: memoryVersion,
        created_at: Date.now(),
      }),
    );
    live.driver.emit('step', {
      step_index: stepIndex,
      decision: summarize(decision),
      usage: toUsageData(usage),
      agent: agent.name,
      handoff_depth: input.handoffStack?.length ?? 0,
      ...(given ? { given_by: live.fork?.by ?? null } : {}),
      ...(agent.planner.model ? { model: agent.planner.model } : {}),
      ...(agent.planner.provider ? { provider: agent.planner.provider } : {}),
    });
    // A model's answer is durable before anything is done with it that a restored run could not
    // do again: with a step's first write that must be durable (a call's `started` row, a wait,
    // the run's end), in the same commit, or on its own when the step's calls are all `read`.
    if (!agent.planner.cheap && !committedByStep(agent, decision)) {
      await live.driver.flush();
      failpoint('planner.journaled');
    }
    return planReady(stepIndex, usage, decision, given !== null);
  });
}
