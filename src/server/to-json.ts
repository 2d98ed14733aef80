/** The API's JSON shapes: snake_case keys; user data (args, results, event data) passes through untouched. */
import type {
  Approval,
  ChildRun,
  CompensationJson,
  PendingInput,
  QuestionSource,
  RerunReport,
  Run,
  RunEventRecord,
  Schedule,
  ToolCall,
  WaitRequest,
} from '../index.js';

/** A run as the API answers it. */
export function toRunJson(run: Run) {
  return {
    id: run.id,
    session_id: run.sessionId,
    status: run.status,
    stop_reason: run.stopReason,
    failure: run.failure,
    wait_reason: run.waitReason,
    pending_approval_id: run.pendingApprovalId,
    metadata: run.metadata,
    tags: run.tags,
    // A pause asked and not reached yet (once reached: `wait_reason: 'paused'`).
    pause_requested: run.pauseRequested ? { reason: run.pauseRequested.reason, by: run.pauseRequested.by } : null,
    // A run started later: when, while it waits queued for it.
    start_at: run.startAt,
    pending_input: run.pendingInput ? toPendingInputJson(run.pendingInput) : null,
    input: run.input,
    answer: run.answer,
    context: run.context,
    tenant_id: run.tenantId,
    idempotency_key: run.idempotencyKey,
    usage: {
      steps: run.usage.steps,
      llm_calls: run.usage.llmCalls,
      tool_calls: run.usage.toolCalls,
      tokens: run.usage.tokens,
      cost_usd: run.usage.costUsd,
    },
    deadline_at: run.deadlineAt,
    // The same shape as on the run's last `state` event.
    compensation: run.compensation ? (toSnakeJson(run.compensation) as CompensationJson) : null,
    agent: run.agent ? { name: run.agent.name, tools_fingerprint: run.agent.toolsFingerprint } : null,
    // The same shape as on the fork's `run.created` event.
    forked_from: run.forkedFrom ? { run_id: run.forkedFrom.runId, step: run.forkedFrom.step } : null,
    // The same shape as on the child's `run.created` event.
    parent: run.parent ? { run_id: run.parent.runId, tool_call_id: run.parent.toolCallId } : null,
    children: run.children.map(toChildJson),
    child_wait: run.childWait
      ? {
          ...toChildJson(run.childWait),
          asking: run.childWait.asking
            ? {
                run_id: run.childWait.asking.runId,
                wait_reason: run.childWait.asking.waitReason,
                pending_approval_id: run.childWait.asking.pendingApprovalId,
                pending_input: run.childWait.asking.pendingInput
                  ? toPendingInputJson(run.childWait.asking.pendingInput)
                  : null,
                // The arguments are the caller's own data: as given.
                tool_calls: run.childWait.asking.toolCalls,
              }
            : null,
        }
      : null,
    // The same shape as on the `handoff` event that left it.
    handoff_stack: run.handoffStack.map((entry) => ({
      agent: entry.agent,
      step: entry.step,
      tool_call_id: entry.toolCallId,
      tools: entry.tools,
      instructions_sha256: entry.instructionsSha256,
    })),
    created_at: run.createdAt,
    updated_at: run.updatedAt,
  };
}

/** A child run as its parent lists it. */
function toChildJson(child: ChildRun) {
  return { run_id: child.runId, tool_call_id: child.toolCallId, agent: child.agent, status: child.status };
}

/** The question a run waits on (`pending_input`); its JSON Schema passes through as written. */
function toPendingInputJson(input: PendingInput) {
  return {
    id: input.id,
    tool_call_id: input.toolCallId,
    question: input.question,
    choices: input.choices,
    schema: input.schema,
    role: input.role,
    expires_at: input.expiresAt,
    from: input.from ? toQuestionFromJson(input.from) : null,
  };
}

/** Who asks a question mid-call, in snake_case. */
function toQuestionFromJson(from: QuestionSource) {
  return { tool: from.tool, ...(from.server !== undefined ? { server: from.server } : {}), in_flight: from.inFlight };
}

/** What a wait asks, in snake_case; a question's JSON Schema passes through as written. */
function toWaitRequestJson(request: WaitRequest | null) {
  if (request === null) return null;
  switch (request.kind) {
    case 'input':
      return {
        kind: request.kind,
        question: request.question,
        choices: request.choices,
        schema: request.schema,
        ...(request.from ? { from: toQuestionFromJson(request.from) } : {}),
      };
    case 'budget':
      return {
        kind: request.kind,
        budget: request.budget,
        step_index: request.stepIndex,
        limits: request.limits.map((l) => ({ budget: l.budget, limit: l.limit, used: l.used })),
      };
    case 'policy':
      return { kind: request.kind, reason: request.reason };
    case 'pause':
      return {
        kind: request.kind,
        reason: request.reason,
        by: request.by,
        resume: request.resume,
        step_index: request.stepIndex,
      };
    case 'repeat':
      return {
        kind: request.kind,
        source: {
          run_id: request.source.runId,
          tool_call_id: request.source.toolCallId,
          tool: request.source.tool,
          status: request.source.status,
          result: toToolResultJson(request.source.result),
          idempotency_key: request.source.idempotencyKey,
        },
      };
  }
}

/** An approval (any human wait) as the API answers it. */
export function toApprovalJson(approval: Approval) {
  return {
    id: approval.id,
    run_id: approval.runId,
    step_index: approval.stepIndex,
    kind: approval.kind,
    tool_call_ids: approval.toolCallIds,
    args_hash: approval.argsHash,
    status: approval.status,
    resolution: approval.resolution,
    decided_by: approval.decidedBy,
    reason: approval.reason,
    created_at: approval.createdAt,
    decided_at: approval.decidedAt,
    votes: approval.votes.map((vote) => ({ by: vote.by, decision: vote.decision, reason: vote.reason, at: vote.at })),
    request: toWaitRequestJson(approval.request),
    role: approval.role,
    expires_at: approval.expiresAt,
    on_expire: approval.onExpire ? { ...approval.onExpire } : null,
    // What the decider gave, as stored (snake_case already; args, outputs and answers as given).
    answer: approval.answer,
  };
}

/** What a rerun did, as the API answers it (each failure as the API's error body's `error`). */
export function toRerunReportJson(report: RerunReport) {
  return {
    dry_run: report.dryRun,
    matched: report.matched,
    created: report.created,
    existing: report.existing,
    reruns: report.reruns.map((entry) => ({
      source_run_id: entry.sourceRunId,
      at_step: entry.atStep,
      run_id: entry.runId,
      created: entry.created,
    })),
    failed: report.failed.map((entry) => ({
      source_run_id: entry.sourceRunId,
      at_step: entry.atStep,
      failure: entry.failure,
    })),
  };
}

/** An event as the API sends it (an SSE frame's data, a `--json` line). */
export function toEventJson(event: RunEventRecord) {
  return { run_id: event.runId, seq: event.seq, type: event.type, data: event.data, created_at: event.createdAt };
}

/**
 * A ledger row as the API answers it. Its `result` is Baton's envelope around the tool's output:
 * the envelope in snake_case (`duration_ms`, `recorded_by`), the output (`content`) and the
 * failure as they are. Stored results keep their camelCase keys, so old rows read the same.
 */
export function toToolCallJson(call: ToolCall) {
  return {
    ...(toSnakeJson(call) as Record<string, unknown>),
    // The model's arguments a person replaced, as the model gave them.
    edited: call.edited
      ? { proposed_args: call.edited.proposedArgs, by: call.edited.by, reason: call.edited.reason }
      : null,
    result: toToolResultJson(call.result),
  };
}

function toToolResultJson(result: unknown): unknown {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return result;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(result)) {
    out[toSnakeKey(key)] = key === 'content' || key === 'failure' ? inner : toSnakeJson(inner);
  }
  return out;
}

// Values under these keys are user or model data, or already in their final shape.
const OPAQUE: ReadonlySet<string> = new Set([
  'args',
  'result',
  'data',
  'details',
  'decision',
  'output',
  'failure',
  // A tool's JSON Schema and an MCP server's annotations: the server's own words.
  'parameters',
  'annotations',
]);

/** A runtime record with its keys in snake_case, recursively, except under opaque keys (tool args, results). */
export function toSnakeJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toSnakeJson);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[toSnakeKey(key)] = OPAQUE.has(key) ? inner : toSnakeJson(inner);
  }
  return out;
}

function toSnakeKey(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** A schedule as the API sends it (snake_case; its context and metadata as given). */
export function toScheduleJson(schedule: Schedule) {
  return {
    id: schedule.id,
    status: schedule.status,
    cron: schedule.cron,
    timezone: schedule.timezone,
    every: schedule.every,
    at: schedule.at,
    input: schedule.input,
    session_id: schedule.sessionId,
    context: schedule.context,
    options: toSnakeJson(schedule.options),
    metadata: schedule.metadata,
    tags: schedule.tags,
    overlap: schedule.overlap,
    catch_up: schedule.catchUp,
    next_at: schedule.nextAt,
    last_tick_at: schedule.lastTickAt,
    last_run_id: schedule.lastRunId,
    runs: schedule.runs,
    skipped: schedule.skipped,
    created_at: schedule.createdAt,
    updated_at: schedule.updatedAt,
  };
}
