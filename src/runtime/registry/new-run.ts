/**
 * Creating a run: the checked request, its limits, its row, and the unit of work that inserts
 * it. The checks for an existing idempotency key and a busy session run inside the write
 * transaction, which holds the file's write lock, so they are atomic across processes; the
 * unique indexes stay the last word.
 */
import { checkMetadata, checkTags, labelsOf, type MetadataValue } from '../model/labels.js';
import { assertWellFormed } from '../model/well-formed.js';
import type { AgentIdentity } from './agent-identity.js';
import { parseTraceparent } from '../observe/traceparent.js';
import { z } from 'zod';
import type { RunMachineDefinition } from '../../../machines/variants.js';
import type { MachineLimits } from '../../../machines/types.js';
import { DEFAULTS } from '../../defaults.js';
import { fail } from '../../failure.js';
import type { RunRow, Store } from '../../store/index.js';
import { toLimitsData } from '../model/event-data.js';
import { newId } from '../model/ids.js';
import { DEFAULT_TENANT, scopeKey } from '../model/tenant-keys.js';
import { instantOf } from '../model/schedules.js';
import type { RunDriver } from '../drive/run-driver.js';
import type { RunDefaults, StartRequest } from '../model/types.js';

/** What happens when a human wait expires: `reject`, `end`, or `{ escalate: role }`. */
export const onExpireSchema = z.union([
  z.enum(['reject', 'end']),
  z.object({ escalate: z.string().min(1).max(100) }).strict(),
]);

/** A run's options, as `start()` and `fork()` take them. */
export const runOptionsSchema = z
  .object({
    idempotencyKey: z.string().min(1).max(200).optional(),
    maxSteps: z.number().int().positive().optional(),
    budget: z
      .object({
        maxLlmCalls: z.number().int().nonnegative().optional(),
        maxToolCalls: z.number().int().nonnegative().optional(),
        maxTokens: z.number().int().nonnegative().optional(),
        maxCostUsd: z.number().nonnegative().optional(),
        timeoutMs: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    onBudgetExceeded: z.enum(['fail', 'ask']).optional(),
    expiresIn: z.number().int().positive().optional(),
    onExpire: onExpireSchema.optional(),
  })
  .strict();

const startSchema = z.object({
  input: z.string().min(1),
  sessionId: z.string().min(1).max(200).optional(),
  onBusy: z.enum(['reject', 'enqueue', 'interrupt']).optional(),
  interrupt: z
    .object({ compensate: z.boolean().optional(), reason: z.string().max(500).optional() })
    .strict()
    .optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  options: runOptionsSchema.optional(),
  traceparent: z.string().max(256).optional(),
  // Checked below (`checkMetadata`, `checkTags`), with errors that name what is wrong.
  metadata: z.unknown().optional(),
  tags: z.unknown().optional(),
  // Checked below (`startAtOf`).
  startAt: z.unknown().optional(),
});

/** The instant a start's `startAt` names (epoch ms, ISO 8601 or a Date), checked. */
function startAtOf(req: z.infer<typeof startSchema>): number | null {
  const given = req.startAt;
  if (given === undefined) return null;
  const at = instantOf(given, 'startAt');
  if (req.sessionId !== undefined || req.onBusy !== undefined) {
    fail(
      'input.invalid',
      'A run started later (startAt) runs in a session of its own: to start one in a session later, schedule it (schedule({ at, sessionId }))',
    );
  }
  return at;
}

/** A checked start request with everything its run is created with. */
export interface NewRun {
  runId: string;
  /** The session as the client names it. */
  clientSessionId: string;
  /** The session as stored: scoped to the run's tenant. */
  sessionId: string;
  /** The idempotency key as stored (scoped), if any. */
  idempotencyKey: string | null;
  tenantId: string;
  request: z.infer<typeof startSchema>;
  /** When a run started with `startAt` is to start (null: now, or an instant already past). */
  startAt: number | null;
  /** What the run is found by (checked; absent when empty). */
  metadata?: Record<string, MetadataValue>;
  tags?: string[];
  limits: MachineLimits;
  deadlineAt: number | null;
  now: number;
}

/** Checks a start request and works out the run's limits from it and the runtime's defaults. */
export function planNewRun(request: StartRequest, defaults: RunDefaults = {}): NewRun {
  const parsed = startSchema.safeParse(request);
  if (!parsed.success) fail('input.invalid', 'Invalid start request', { details: { issues: parsed.error.issues } });
  assertWellFormed(parsed.data, 'The start request');
  const req = parsed.data;
  const metadata = req.metadata === undefined ? undefined : checkMetadata(req.metadata);
  const tags = req.tags === undefined ? undefined : checkTags(req.tags);
  const now = Date.now();
  const startAt = startAtOf(req);
  const budget = { ...defaults.budget, ...req.options?.budget };
  // A run started without a tenant is the default tenant's, stored so: a server's token of that
  // tenant lists it, and in-process reads say `default` as the API does.
  const tenantId = typeof req.context?.tenant_id === 'string' ? req.context.tenant_id : DEFAULT_TENANT;
  const clientSessionId = req.sessionId ?? newId('ses');
  const key = req.options?.idempotencyKey;
  return {
    runId: newId('run'),
    clientSessionId,
    sessionId: scopeKey(tenantId, clientSessionId),
    idempotencyKey: key === undefined ? null : scopeKey(tenantId, key),
    tenantId,
    request: req,
    startAt: startAt !== null && startAt > now ? startAt : null,
    ...(metadata && Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(tags && tags.length > 0 ? { tags } : {}),
    limits: {
      maxSteps: req.options?.maxSteps ?? defaults.maxSteps ?? DEFAULTS.maxSteps,
      maxLlmCalls: budget.maxLlmCalls ?? null,
      maxToolCalls: budget.maxToolCalls ?? null,
      maxTokens: budget.maxTokens ?? null,
      maxCostUsd: budget.maxCostUsd ?? null,
      loopThreshold: DEFAULTS.loopThreshold,
      ...((req.options?.onBudgetExceeded ?? defaults.onBudgetExceeded) === 'ask'
        ? { onBudgetExceeded: 'ask' as const }
        : {}),
    },
    deadlineAt: budget.timeoutMs !== undefined ? now + budget.timeoutMs : null,
    now,
  };
}

/** The row of a new run, owned by the runtime that creates it. */
export function toNewRow(
  run: NewRun,
  snapshot: string,
  owner: string,
  machine: Pick<RunMachineDefinition, 'name' | 'version'>,
  leaseMs: number,
  agent: AgentIdentity,
): RunRow {
  return {
    id: run.runId,
    session_id: run.sessionId,
    status: 'pending',
    stop_reason: null,
    failure: null,
    wait_reason: null,
    pending_approval_id: null,
    input: run.request.input,
    context: JSON.stringify(run.request.context ?? {}),
    options: JSON.stringify(run.request.options ?? {}),
    idempotency_key: run.idempotencyKey,
    tenant_id: run.tenantId,
    answer: null,
    snapshot,
    machine_name: machine.name,
    machine_version: machine.version,
    version: 0,
    step_index: 0,
    llm_calls: 0,
    tool_calls: 0,
    tokens: 0,
    cost_usd: 0,
    deadline_at: run.deadlineAt,
    wake_at: null,
    epoch: 0,
    cancel_requested: null,
    pause_requested: null,
    compensation: null,
    agent: agent.name,
    agent_tools: agent.tools,
    forked_from: null,
    fork: null,
    parent_run_id: null,
    parent_call_id: null,
    queue_order: null,
    metadata: run.metadata ? JSON.stringify(run.metadata) : null,
    tags: run.tags ? JSON.stringify(run.tags) : null,
    owner,
    // The creator's clock for the first lease; every renewal uses the database's (on PostgreSQL).
    lease_until: run.now + leaseMs,
    created_at: run.now,
    updated_at: run.now,
  };
}

/** What inserting a new run found. */
export type Creation = { kind: 'created' } | { kind: 'existing'; row: RunRow } | { kind: 'busy'; runId: string | null };

/** JSON with object keys sorted, so two equal requests compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/**
 * What differs between the run an idempotency key already names and a new request with that
 * key (input, session, context, options); empty when it is the same request again.
 */
export function requestDifferences(row: RunRow, run: NewRun): string[] {
  const differences: string[] = [];
  if (row.input !== run.request.input) differences.push('input');
  if (run.request.sessionId !== undefined && row.session_id !== run.sessionId) differences.push('session');
  if (canonical(JSON.parse(row.context)) !== canonical(run.request.context ?? {})) differences.push('context');
  if (canonical(JSON.parse(row.options)) !== canonical(run.request.options ?? {})) differences.push('options');
  if (canonical(row.metadata ? JSON.parse(row.metadata) : {}) !== canonical(run.metadata ?? {}))
    differences.push('metadata');
  if (canonical(row.tags ? JSON.parse(row.tags) : []) !== canonical(run.tags ?? [])) differences.push('tags');
  return differences;
}

/**
 * What an idempotency key or a session already holds, if anything: the run a key names, or the
 * session's active run. Read before a run is inserted, and again if the insert collides.
 */
export async function findCollision(store: Store, run: NewRun, key: string | null): Promise<Creation | null> {
  const existing = key ? await store.findRunByIdempotencyKey(key) : undefined;
  if (existing) return { kind: 'existing', row: existing };
  const active = await store.activeRunOfSession(run.sessionId);
  if (active) return { kind: 'busy', runId: active.id };
  return null;
}

/**
 * Stages the insertion of a run and its `run.created` event. An idempotency key or session
 * taken in the meantime fails the unit on its unique index (`isUniqueViolation`): nothing of it
 * is written, and the caller reads what took it (`findCollision`).
 */
export function stageCreation(driver: RunDriver, run: NewRun, row: RunRow, extra: Record<string, unknown> = {}): void {
  driver.stage((writer) => {
    writer.ensureSession(run.sessionId, run.now);
    writer.insertRun(row);
    for (const label of labelsOf(run.metadata, run.tags)) writer.insertLabel(row.id, label, row.created_at);
    driver.writeEvent('run.created', {
      ...extra,
      input: run.request.input,
      session_id: run.clientSessionId,
      limits: toLimitsData(run.limits),
      deadline_at: run.deadlineAt,
      ...(row.agent ? { agent: row.agent } : {}),
      ...(row.parent_run_id ? { parent: { run_id: row.parent_run_id, tool_call_id: row.parent_call_id } } : {}),
      ...(run.request.traceparent && parseTraceparent(run.request.traceparent)
        ? { traceparent: run.request.traceparent.trim() }
        : {}),
    });
  });
}
