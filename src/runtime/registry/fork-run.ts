/**
 * Forking a run (`runtime.fork`): a new run whose steps before `atStep` are its source's, copied
 * and never run again (`fork-copy.ts`), and which plans step `atStep` on with this runtime's
 * agent — its planner seeing the transcript the source's saw there. The source is read in one
 * snapshot and never written; the fork is created in one unit of work (its row, session
 * history, copied journal, ledger, waits, events and artifact references, its `run.created`),
 * so a crash leaves all of it or none. Invariant: nothing of the prefix is executed again: a
 * copied call keeps its result and its source's idempotency key; a call of the fork that
 * would repeat one of the source's effects is the executor's to hold (`steps/repeat-effect.ts`).
 */
import { z } from 'zod';
import type { RunInput } from '../../../machines/types.js';
import { fail, quoteId } from '../../failure.js';
import type { Decision } from '../../planner/types.js';
import { isUniqueViolation, type RunRow } from '../../store/index.js';
import { HUMAN_ASK } from '../../tools/human-ask.js';
import { HANDOFF_BACK } from '../../tools/handoff-back.js';
import { createDriver } from '../drive/run-driver.js';
import type { RuntimeEnv } from '../drive/env.js';
import { toolOf } from '../ledger/ledger.js';
import { failpoint } from '../model/failpoints.js';
import { forkTermsOf, toRun } from '../model/rows.js';
import { DEFAULT_TENANT, scopeKey } from '../model/tenant-keys.js';
import type { ForkRequest, ForkTerms, MemoryBase, Run, RunOptions } from '../model/types.js';
import { assertWellFormed } from '../model/well-formed.js';
import { toLimitsData } from '../model/event-data.js';
import { copyPrefix, type ForkCopy } from './fork-copy.js';
import { agentMismatchOf } from './agent-identity.js';
import { planNewRun, runOptionsSchema, toNewRow } from './new-run.js';
import type { StartContext } from './start-run.js';

/** What forking needs from its runtime: what starting a run needs, and the tools (to check a decision). */
export interface ForkContext extends StartContext {
  env: Pick<RuntimeEnv, 'tools' | 'name' | 'agents'>;
}

/** A decision a caller gives a fork's step: tool calls (at least one) or a final answer, nothing else. */
export const givenDecisionSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('tool_calls'),
    calls: z.array(z.strictObject({ tool: z.string().min(1), args: z.unknown() })).min(1),
    text: z.string().optional(),
  }),
  z.strictObject({ type: z.literal('final'), answer: z.string() }),
]);

const forkSchema = z
  .object({
    // Any whole number: one the run has not reached (a negative one too) is refused with the run's last step.
    atStep: z.number().int(),
    decision: givenDecisionSchema.optional(),
    /** The agent the fork is for when it is not the source's: this runtime's, named to say so. */
    agent: z.string().min(1).max(64).optional(),
    input: z.string().min(1).optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    options: runOptionsSchema.optional(),
    repeatEffects: z.enum(['ask', 'allow']).optional(),
    by: z.string().min(1).max(200).optional(),
  })
  .strict();

type Issue = { path: (string | number)[]; message: string };

/** The issues of a given decision: a call of a tool this agent does not have, or arguments its schema refuses. */
function decisionIssues(ctx: ForkContext, decision: Decision): (Issue & { code: string })[] {
  if (decision.type !== 'tool_calls') return [];
  const issues: (Issue & { code: string })[] = [];
  for (const [index, call] of decision.calls.entries()) {
    const path = ['decision', 'calls', index];
    const tool = toolOf(ctx.env as RuntimeEnv, call.tool);
    if (!tool) {
      const known = [...ctx.env.tools.keys()].join(', ');
      issues.push({ code: 'custom', path: [...path, 'tool'], message: `Unknown tool '${call.tool}': one of ${known}` });
      continue;
    }
    const parsed = tool.input.safeParse(call.args);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        issues.push({
          code: issue.code,
          path: [...path, 'args', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
          message: issue.message,
        });
      }
    }
  }
  return issues;
}

/** Checks a fork request against its source: the step, what may change there, the decision. */
function checkRequest(ctx: ForkContext, source: RunRow, request: z.infer<typeof forkSchema>): void {
  const { atStep } = request;
  if (atStep < 0 || atStep > source.step_index) {
    fail('input.invalid', `Run '${source.id}' has no step ${atStep}: its steps are 0 to ${source.step_index}`, {
      details: { at_step: atStep, last_step: source.step_index },
    });
  }
  if (atStep > 0 && (request.input !== undefined || request.context !== undefined)) {
    fail(
      'input.invalid',
      "A fork takes another input or context only at step 0: later steps were decided on the source's",
      {
        details: { at_step: atStep },
      },
    );
  }
  const tenant = source.tenant_id ?? DEFAULT_TENANT;
  const asked = request.context?.tenant_id;
  if (asked !== undefined && asked !== tenant) {
    fail('input.invalid', `A fork stays in its source's tenant ${quoteId(tenant)}`, { details: { tenant_id: asked } });
  }
  // Another agent's run is forked for this runtime's agent only when the request says so.
  const mismatch = agentMismatchOf(source, ctx.agent);
  if (mismatch && request.agent !== ctx.agent.name) {
    fail(
      'run.agent_mismatch',
      `${mismatch.message}; to fork it for agent '${ctx.agent.name}', name that agent in the request`,
      {
        details: mismatch.details ?? {},
      },
    );
  }
  if (request.agent !== undefined && request.agent !== ctx.agent.name) {
    fail('run.agent_mismatch', `This runtime forks runs for agent '${ctx.agent.name}', not '${request.agent}'`, {
      details: { run_id: source.id, run_agent: source.agent, runtime_agent: ctx.agent.name },
    });
  }
  if (request.decision) {
    const issues = decisionIssues(ctx, request.decision);
    if (issues.length > 0)
      fail('input.invalid', `The decision for step ${atStep} is not valid`, { details: { issues } });
  }
}

/** Refuses a fork whose copied calls name tools this agent no longer has (they could not be shown as they were). */
function checkTools(ctx: ForkContext, copy: ForkCopy, sourceId: string): void {
  const missing = new Set<string>();
  // A call's tool is one of the agent that planned its step (another, after a handoff).
  const agents = new Map(copy.steps.map((step) => [step.step_index, step.agent]));
  for (const row of copy.toolCalls) {
    if (row.status === 'not_found' || row.tool === HUMAN_ASK || row.tool === HANDOFF_BACK) continue;
    const name = agents.get(row.step_index);
    const tools = (name && name !== ctx.env.name ? ctx.env.agents.get(name)?.tools : undefined) ?? ctx.env.tools;
    if (!tools.has(row.tool)) missing.add(row.tool);
  }
  if (missing.size === 0) return;
  const tools = [...missing];
  fail(
    'fork.tool_missing',
    `Run '${sourceId}' called ${tools.map((t) => `'${t}'`).join(', ')} before that step, and this agent has no such tool`,
    { details: { tools } },
  );
}

/** The session memories a fork of `source` reads beneath its own, each as of `version` at most. */
function memoryBasesOf(source: RunRow, version: number): MemoryBase[] {
  const inherited = forkTermsOf(source)?.memory_bases ?? [];
  return [
    ...inherited.map((base) => ({ scope: base.scope, version: Math.min(base.version, version) })),
    { scope: `session:${source.session_id}`, version },
  ];
}

/** The fork's options: the source's (but its idempotency key), with the request's over them. */
function mergedOptions(source: RunRow, options: RunOptions | undefined): RunOptions {
  const inherited = JSON.parse(source.options) as RunOptions;
  delete inherited.idempotencyKey;
  const merged: RunOptions = { ...inherited, ...options };
  if (inherited.budget || options?.budget) merged.budget = { ...inherited.budget, ...options?.budget };
  if (merged.idempotencyKey === undefined) delete merged.idempotencyKey;
  return merged;
}

/** The run a fork's idempotency key already names, if it is this fork; a key of another request is a mismatch. */
function sameFork(existing: RunRow, sourceId: string, atStep: number, key: string): Run {
  const terms = forkTermsOf(existing);
  if (existing.forked_from !== sourceId || terms?.step !== atStep) {
    fail(
      'idempotency.mismatch',
      `Idempotency key ${quoteId(key)} belongs to run '${existing.id}', which is not a fork of '${sourceId}' at step ${atStep}`,
      { details: { run_id: existing.id, differences: ['fork'] } },
    );
  }
  return toRun(existing);
}

/** Creates, commits and (when this runtime drives runs) starts a fork of run `sourceId`. */
export async function forkRun(ctx: ForkContext, sourceId: string, request: ForkRequest): Promise<Run> {
  const parsed = forkSchema.safeParse(request);
  if (!parsed.success) fail('input.invalid', 'Invalid fork request', { details: { issues: parsed.error.issues } });
  assertWellFormed(parsed.data, 'The fork request');
  const req = parsed.data;
  const { store, registry, owner, definition, leaseMs, drive } = ctx;
  const source = await store.readForkSource(sourceId);
  if (!source) fail('run.not_found', `Run ${quoteId(sourceId)} does not exist`);
  const tenant = source.run.tenant_id ?? DEFAULT_TENANT;
  const key = req.options?.idempotencyKey;
  const scopedKey = key === undefined ? null : scopeKey(tenant, key);
  if (scopedKey) {
    const existing = await store.findRunByIdempotencyKey(scopedKey);
    if (existing) return sameFork(existing, sourceId, req.atStep, key!);
  }
  checkRequest(ctx, source.run, req);
  const inherited = JSON.parse(source.run.context) as Record<string, unknown>;
  const context = { ...inherited, ...req.context };
  // A context given at step 0 stays in the source's tenant.
  if (inherited.tenant_id !== undefined) context.tenant_id = inherited.tenant_id;
  const run = planNewRun(
    { input: req.input ?? source.run.input, context, options: mergedOptions(source.run, req.options) },
    ctx.defaults,
  );
  if (req.atStep >= run.limits.maxSteps) {
    fail(
      'input.invalid',
      `A fork at step ${req.atStep} could plan no step: its step limit (${run.limits.maxSteps}) counts the copied steps too`,
      { details: { at_step: req.atStep, max_steps: run.limits.maxSteps } },
    );
  }
  const copy = copyPrefix(source, req.atStep, run.runId, run.sessionId);
  checkTools(ctx, copy, sourceId);
  const input: RunInput = {
    runId: run.runId,
    limits: run.limits,
    deadlineAt: run.deadlineAt,
    stepIndex: req.atStep,
    budgetAsks: copy.budgetAsks,
    pauses: copy.pauses,
    ...(copy.handoffStack.length > 0 ? { handoffStack: copy.handoffStack } : {}),
  };
  const driver = createDriver(registry.driverDeps, run.runId, { kind: 'new', input, memory: copy.memory });
  // The fork's step reads the memory its source's read there, not a newer version, and the
  // source's session memory as it was then lies beneath the fork's own session's.
  const memoryVersion = source.steps.find((step) => step.step_index === req.atStep)?.memory_version ?? null;
  const terms: ForkTerms = {
    step: req.atStep,
    repeat_effects: req.repeatEffects ?? 'ask',
    decision: req.decision ?? null,
    by: req.by ?? null,
    memory_version: memoryVersion,
    memory_bases: memoryBasesOf(source.run, memoryVersion ?? (await ctx.store.memoryVersion())),
  };
  const row: RunRow = {
    ...toNewRow(run, JSON.stringify(driver.actor.getPersistedSnapshot()), owner, definition, leaseMs, ctx.agent),
    step_index: req.atStep,
    forked_from: sourceId,
    fork: JSON.stringify(terms),
  };
  if (!drive) Object.assign(row, { owner: null, lease_until: null });
  const forkedFrom = { run_id: sourceId, step: req.atStep };
  driver.stage((writer) => {
    writer.ensureSession(run.sessionId, run.now);
    writer.insertRun(row);
    // A fork is a run of the tenant like any other: over its cap, nothing of the fork is written.
    if (ctx.runsPerTenant !== undefined) writer.capTenant(row.tenant_id, ctx.runsPerTenant);
    for (const message of copy.messages) writer.insertMessage(message);
    driver.writeEvent('run.created', {
      input: row.input,
      session_id: run.clientSessionId,
      limits: toLimitsData(run.limits),
      deadline_at: run.deadlineAt,
      ...(row.agent ? { agent: row.agent } : {}),
      forked_from: forkedFrom,
      repeat_effects: terms.repeat_effects,
      ...(terms.decision ? { decision: terms.decision } : {}),
      ...(terms.by ? { by: terms.by } : {}),
      copied: {
        steps: copy.steps.length,
        tool_calls: copy.toolCalls.length,
        approvals: copy.approvals.length,
        events: copy.events.length,
      },
    });
    for (const event of copy.events)
      driver.writeEvent(event.type, JSON.parse(event.data) as Record<string, unknown>, event.created_at);
    // A crash from here on, in the middle of the copy, must leave none of it.
    failpoint('fork.copying');
    for (const step of copy.steps) writer.insertStep(step);
    for (const call of copy.toolCalls) writer.putToolCall(call);
    for (const approval of copy.approvals) writer.insertApproval(approval);
    for (const sha256 of copy.artifacts) writer.refArtifact(sha256, run.runId);
  });
  try {
    await driver.flush();
  } catch (error) {
    // The same key taken in between: that fork is the answer (or the mismatch).
    if (!isUniqueViolation(error) || !scopedKey) throw error;
    const existing = await store.findRunByIdempotencyKey(scopedKey);
    if (!existing) throw error;
    return sameFork(existing, sourceId, req.atStep, key!);
  }
  if (!drive) return toRun(row);
  registry.register(row, driver);
  driver.start();
  driver.actor.send({ type: 'start' });
  return toRun(row);
}
