/** Conversions from stored rows to the public API's shapes. */
import {
  LISTED_STATUSES,
  type HandoffFrame,
  type RunStatus,
  type StopReason,
  type WaitReason,
} from '../../../machines/types.js';
import { DEFAULT_TENANT, unscopeKey } from './tenant-keys.js';
import { createFailure, fail, type Failure } from '../../failure.js';
import type { ApprovalRow, EventRow, RunRow, StepRow, ToolCallRow } from '../../store/index.js';
import type { Usage } from '../../../machines/types.js';
import { decisionSchema } from '../../planner/types.js';
import type { ContextReport, PauseRequested } from './types.js';
import { parsePauseRequest } from './pause-ask.js';
import type { RunUserContext } from '../../tools/define-tool.js';
import type {
  Approval,
  ApprovalVote,
  PendingInput,
  WaitRequest,
  ArtifactRef,
  Run,
  LogEventType,
  RunEventRecord,
  Step,
  ToolCall,
  ForkTerms,
  HandoffEntry,
} from './types.js';
import type { ToolResult } from '../../tools/tool-result.js';
import type { AnyTool } from '../../tools/define-tool.js';
import type { RunCompensation } from './event-data.js';
import { COMPENSATION_SUFFIX } from './ids.js';

/** The failure of a run with a damaged column. */
export function corruptRow(runId: string, column: string, why: string): Failure {
  return createFailure('store.corrupt_row', `Run '${runId}' has a corrupt '${column}' column: ${why}`, {
    details: { run_id: runId, column },
  });
}

const STATUSES: ReadonlySet<string> = new Set(LISTED_STATUSES);

/**
 * A run row as the API reports it. A damaged row is still reported, with a `store.corrupt_row`
 * failure naming the column, so one bad row never breaks a listing.
 */
export function toRun(row: RunRow, pending?: ApprovalRow | null): Run {
  let damage: Failure | null = STATUSES.has(row.status)
    ? null
    : corruptRow(row.id, 'status', `unknown status '${row.status}'`);
  const parse = (column: 'context' | 'failure' | 'compensation' | 'metadata' | 'tags', text: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      damage ??= corruptRow(row.id, column, error instanceof Error ? error.message : String(error));
      return null;
    }
  };
  const context = (parse('context', row.context) ?? {}) as RunUserContext;
  const failure = row.failure ? (parse('failure', row.failure) as Failure | null) : null;
  const compensation = row.compensation ? (parse('compensation', row.compensation) as RunCompensation | null) : null;
  const metadata = row.metadata ? ((parse('metadata', row.metadata) as Run['metadata'] | null) ?? {}) : {};
  const tags = row.tags ? ((parse('tags', row.tags) as Run['tags'] | null) ?? []) : [];
  return {
    id: row.id,
    sessionId: unscopeKey(row.tenant_id, row.session_id),
    status: row.status as RunStatus,
    stopReason: row.stop_reason as StopReason | null,
    failure: damage ?? failure,
    waitReason: row.wait_reason as WaitReason | null,
    pendingApprovalId: row.pending_approval_id,
    metadata,
    tags,
    pauseRequested: pauseRequestedOf(row),
    // A run started with `startAt` waits queued with its instant as `wake_at`.
    startAt: row.status === 'queued' && row.wake_at !== null ? Number(row.wake_at) : null,
    pendingInput:
      pending && (pending.id === row.pending_approval_id || asksInFlight(pending)) ? toPendingInput(pending) : null,
    input: row.input,
    answer: row.answer,
    context,
    // Runs stored without a tenant (started in process before tenants were stored) are the default tenant's.
    tenantId: row.tenant_id ?? DEFAULT_TENANT,
    idempotencyKey: unscopeKey(row.tenant_id, row.idempotency_key),
    // Each step is one planner decision acted upon.
    usage: {
      steps: row.llm_calls,
      llmCalls: row.llm_calls,
      toolCalls: row.tool_calls,
      tokens: row.tokens,
      costUsd: row.cost_usd,
    },
    deadlineAt: row.deadline_at,
    compensation,
    agent: row.agent === null ? null : { name: row.agent, toolsFingerprint: row.agent_tools },
    forkedFrom: row.forked_from === null ? null : { runId: row.forked_from, step: forkTermsOf(row)?.step ?? 0 },
    parent: row.parent_run_id === null ? null : { runId: row.parent_run_id, toolCallId: row.parent_call_id ?? '' },
    // Read beyond the row (`read/run-tree.ts`): the run's children, and what it waits on.
    children: [],
    childWait: null,
    handoffStack: handoffStackOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const ASKS_PAUSE: ReadonlySet<string> = new Set(['pending', 'planning', 'executing', 'waiting_human']);

/**
 * The pause asked of a run and not reached: its stored request (asked by a runtime), else the ask
 * its checkpoint holds (an event sent to its machine). Only a snapshot that names one is parsed.
 */
function pauseRequestedOf(row: Pick<RunRow, 'status' | 'pause_requested' | 'snapshot'>): PauseRequested | null {
  if (!ASKS_PAUSE.has(row.status)) return null;
  if (row.pause_requested) {
    const asked = parsePauseRequest(row.pause_requested);
    return { reason: asked?.reason ?? null, by: asked?.by ?? null };
  }
  if (!row.snapshot?.includes('"pauseAsk":{')) return null;
  try {
    const asked = (JSON.parse(row.snapshot) as { context?: { pauseAsk?: PauseRequested | null } }).context?.pauseAsk;
    return asked ? { reason: asked.reason ?? null, by: asked.by ?? null } : null;
  } catch {
    return null;
  }
}

/**
 * The handoff stack in a run's checkpoint. Only a snapshot that names one is parsed (most runs
 * never hand over); a snapshot that does not parse has none (its row says so elsewhere).
 */
function handoffStackOf(row: Pick<RunRow, 'snapshot'>): HandoffEntry[] {
  if (!row.snapshot?.includes('"handoffStack"')) return [];
  try {
    const stack = (JSON.parse(row.snapshot) as { context?: { handoffStack?: HandoffFrame[] } }).context?.handoffStack;
    return (stack ?? []).map((frame) => ({
      agent: frame.agent,
      step: frame.step,
      toolCallId: frame.callId,
      tools: frame.tools,
      instructionsSha256: frame.instructions,
    }));
  } catch {
    return [];
  }
}

/** What a fork was made with (`runs.fork`), as stored; null for a run that is no fork or a column that does not parse. */
export function forkTermsOf(row: Pick<RunRow, 'fork'>): ForkTerms | null {
  if (row.fork === null) return null;
  try {
    return JSON.parse(row.fork) as ForkTerms;
  } catch {
    return null;
  }
}

/** The call a compensation row undoes, or null for an ordinary call. */
export function compensatedCallOf(row: Pick<ToolCallRow, 'id' | 'call_index'>): string | null {
  return row.call_index < 0 && row.id.endsWith(COMPENSATION_SUFFIX)
    ? row.id.slice(0, -COMPENSATION_SUFFIX.length)
    : null;
}

/** An event row as the API reports it. */
export function toEvent(row: EventRow): RunEventRecord {
  return {
    runId: row.run_id,
    seq: row.seq,
    type: row.type as LogEventType,
    data: JSON.parse(row.data) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/** True for a question a call asks while it stays in flight (the run is `executing`, not waiting). */
export function asksInFlight(row: Pick<ApprovalRow, 'kind' | 'request'>): boolean {
  if (row.kind !== 'input' || !row.request) return false;
  return (JSON.parse(row.request) as { from?: { inFlight?: boolean } }).from?.inFlight === true;
}

/** A run's pending question, from its `input` wait (null for any other row). */
export function toPendingInput(row: ApprovalRow): PendingInput | null {
  if (row.kind !== 'input' || row.status !== 'pending' || !row.request) return null;
  const request = JSON.parse(row.request) as Extract<WaitRequest, { kind: 'input' }>;
  const from = request.from;
  return {
    id: row.id,
    toolCallId: (JSON.parse(row.tool_call_ids) as string[])[0] ?? '',
    question: request.question,
    choices: request.choices,
    schema: request.schema,
    role: row.role,
    expiresAt: row.expires_at,
    from: from
      ? { tool: from.tool, ...(from.server !== undefined ? { server: from.server } : {}), inFlight: from.inFlight }
      : null,
  };
}

/** What a wait asks, as the API shows it: a stopped call's state is the tool's, never shown. */
function shownRequest(text: string): WaitRequest {
  const request = JSON.parse(text) as WaitRequest & { state?: unknown };
  delete request.state;
  return request;
}

/** An approval row as the API reports it. */
export function toApproval(row: ApprovalRow): Approval {
  return {
    id: row.id,
    runId: row.run_id,
    stepIndex: row.step_index,
    kind: row.kind as Approval['kind'],
    toolCallIds: JSON.parse(row.tool_call_ids) as string[],
    argsHash: row.args_hash,
    status: row.status as Approval['status'],
    resolution: row.resolution,
    decidedBy: row.decided_by,
    reason: row.reason,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
    votes: JSON.parse(row.votes) as ApprovalVote[],
    request: row.request ? shownRequest(row.request) : null,
    role: row.role,
    expiresAt: row.expires_at,
    onExpire: row.expiry ? (JSON.parse(row.expiry) as Approval['onExpire']) : null,
    answer: row.answer ? (JSON.parse(row.answer) as Record<string, unknown>) : null,
  };
}

/** A step row as the API reports it. */
export function toStep(row: StepRow): Step {
  return {
    stepIndex: row.step_index,
    decision: decisionSchema.parse(JSON.parse(row.decision)),
    usage: JSON.parse(row.usage) as Usage,
    context: row.context ? (JSON.parse(row.context) as ContextReport) : null,
    agent: row.agent ?? null,
    memoryVersion: row.memory_version ?? null,
    createdAt: row.created_at,
  };
}

/** A ledger row as the API reports it. */
export function toToolCall(row: ToolCallRow, tool?: AnyTool): ToolCall {
  return {
    id: row.id,
    stepIndex: row.step_index,
    callIndex: row.call_index,
    tool: row.tool,
    toolVersion: row.tool_version,
    effect: row.effect,
    risk: tool?.risk ?? null,
    origin: tool?.origin ?? null,
    compensates: compensatedCallOf(row),
    copiedFrom: row.copied_from,
    childRunId: row.child_run_id,
    handle: row.handle === null ? null : (JSON.parse(row.handle) as unknown),
    idempotencyKey: row.idempotency_key ?? row.id,
    args: JSON.parse(row.args) as unknown,
    edited: row.edited ? toEdited(row.edited) : null,
    status: row.status,
    result: row.result ? (JSON.parse(row.result) as ToolResult) : null,
    attempts: row.attempts,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    deadlineAt: row.deadline_at ?? null,
  };
}

/** Refuses a list filter whose status is no run status or whose cursor no page gave. */
export function checkListFilter(filter: {
  status?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
  failureCode?: string | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
}): void {
  for (const key of ['createdAfter', 'createdBefore'] as const) {
    const at = filter[key];
    if (at !== undefined && !(Number.isSafeInteger(at) && at >= 0)) {
      fail('input.invalid', `Invalid ${key} ${String(at)}: an instant in milliseconds since the epoch`, {
        details: { [key]: at },
      });
    }
  }
  const code = filter.failureCode;
  if (code !== undefined && !(typeof code === 'string' && /^[a-z_]+\.[a-z_]+$/.test(code))) {
    fail('input.invalid', `Invalid failure code '${String(code).slice(0, 60)}': a code like 'tool.failed'`);
  }
  // A page is 1 to 1,000 runs: a negative or zero limit must not read as "every run".
  if (filter.limit !== undefined && !(Number.isInteger(filter.limit) && filter.limit >= 1 && filter.limit <= 1_000)) {
    fail('input.invalid', `Invalid limit ${String(filter.limit)}: a whole number from 1 to 1000`, {
      details: { limit: filter.limit },
    });
  }
  if (filter.status !== undefined && !(LISTED_STATUSES as readonly string[]).includes(filter.status)) {
    fail(
      'input.invalid',
      `Unknown status '${String(filter.status).slice(0, 60)}': one of ${LISTED_STATUSES.join(', ')}`,
    );
  }
  // A cursor is `<created_at>:<run id>` as a page gave it; anything else would read as the end.
  if (filter.cursor !== undefined && !/^\d{1,16}:[A-Za-z0-9_.:-]{1,300}$/.test(filter.cursor)) {
    fail('input.invalid', `Invalid cursor '${filter.cursor.slice(0, 60)}': pass the next_cursor of a page`);
  }
}

/** The artifacts a run's `artifact` events name, each once, in order. */
export function artifactRefs(rows: readonly EventRow[]): ArtifactRef[] {
  const refs = new Map<string, ArtifactRef>();
  for (const row of rows) {
    const data = JSON.parse(row.data) as { sha256?: string; size?: number; media_type?: string };
    if (typeof data.sha256 !== 'string' || refs.has(data.sha256)) continue;
    refs.set(data.sha256, {
      sha256: data.sha256,
      size: data.size ?? 0,
      mediaType: data.media_type ?? 'application/octet-stream',
    });
  }
  return [...refs.values()];
}

/** A call's edit, as stored (`{ proposed_args, by, reason }`). */
function toEdited(text: string): NonNullable<ToolCall['edited']> {
  const edited = JSON.parse(text) as { proposed_args: unknown; by: string; reason: string | null };
  return { proposedArgs: edited.proposed_args, by: edited.by, reason: edited.reason };
}
