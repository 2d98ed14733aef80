/**
 * The versioned memory as a run sees it (`memoryTools()`): the version a step's planner reads
 * (the memory's last version when the step is planned, made durable with the step, or a fork's
 * source's at that step), what it is shown, and the calls of `memory.read` (that version, with
 * the step's own earlier writes) and `memory.write` (a new version, staged in the same unit as
 * the call's ledger row, so it happens once whatever crashes). Invariant: a step's reads never
 * see a version newer than its planner's, so a resumed or forked run decides on what it read.
 */
import { createFailure } from '../../failure.js';
import type { PlannerMemory } from '../../planner/types.js';
import {
  MEMORY_WRITE,
  memoryAccessOf,
  type MemoryReadInput,
  type MemoryScope,
  type MemoryWriteInput,
} from '../../tools/memory-tools.js';
import { toErrorResult, type ToolResult } from '../../tools/tool-result.js';
import type { AgentEnv, LiveRun, RuntimeEnv } from '../drive/env.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { DEFAULT_TENANT } from '../model/tenant-keys.js';
import type { CallScope } from './call-scope.js';

/** Entries by key, per scope. */
type Entries = Partial<Record<MemoryScope, Record<string, unknown>>>;

/** The most entries of a scope a planner is shown (the rest are read with `memory.read`). */
const SHOWN_ENTRIES = 100;

/** The scopes of each agent's memory tools, found once (a step asks for them every time). */
const scopesByTools = new WeakMap<AgentEnv['tools'], MemoryScope[]>();

/** The memory scopes an agent's memory tools give it (none: it has no memory). */
export function memoryScopesOf(agent: Pick<AgentEnv, 'tools'>): MemoryScope[] {
  let found = scopesByTools.get(agent.tools);
  if (!found) {
    const scopes = new Set<MemoryScope>();
    for (const tool of agent.tools.values()) for (const scope of memoryAccessOf(tool)?.scopes ?? []) scopes.add(scope);
    scopesByTools.set(agent.tools, (found = [...scopes]));
  }
  return found;
}

/** The stored scope of a run's session's or tenant's memory. */
function storedScope(live: LiveRun, scope: MemoryScope): string {
  if (scope === 'session') return `session:${live.sessionId}`;
  const tenant = live.context.tenant_id;
  return `tenant:${typeof tenant === 'string' && tenant ? tenant : DEFAULT_TENANT}`;
}

/**
 * The entries of `scopes` as of `version`. A fork's session memory is its source's as of the
 * fork (and its source's source's…), with the fork's own session's over it.
 */
async function readEntries(env: RuntimeEnv, live: LiveRun, scopes: readonly MemoryScope[], version: number) {
  const entries: Entries = {};
  for (const scope of scopes) {
    const layers = [
      ...(scope === 'session' ? (live.fork?.memoryBases ?? []) : []).map((base) => ({
        scope: base.scope,
        version: Math.min(base.version, version),
      })),
      { scope: storedScope(live, scope), version },
    ];
    const found: Record<string, unknown> = {};
    for (const layer of layers) {
      for (const row of await env.store.readMemory([layer.scope], layer.version)) {
        if (row.value === null) delete found[row.key];
        else found[row.key] = JSON.parse(row.value) as unknown;
      }
    }
    entries[scope] = found;
  }
  return entries;
}

/**
 * The memory the planner of a step is shown, and its version (also what the step's calls read):
 * a fork's first step reads its source's version there; any other step reads the last version,
 * after this run's own writes are durable. Null for an agent without memory tools.
 */
export async function plannerMemory(
  env: RuntimeEnv,
  live: LiveRun,
  agent: AgentEnv,
  stepIndex: number,
): Promise<PlannerMemory | null> {
  const scopes = memoryScopesOf(agent);
  if (scopes.length === 0) return null;
  const forked = live.fork && live.fork.step === stepIndex ? live.fork.memoryVersion : null;
  let version = forked ?? null;
  if (version === null) {
    await live.driver.flush();
    version = await env.store.memoryVersion();
  }
  const entries = await readEntries(env, live, scopes, version);
  const shown: Entries = {};
  for (const scope of scopes)
    shown[scope] = Object.fromEntries(Object.entries(entries[scope]!).slice(0, SHOWN_ENTRIES));
  return { version, ...shown };
}

/** A settled memory call's result. */
function ok(content: unknown): ToolResult {
  return { status: 'ok', content, durationMs: 0, truncated: false, retryable: false };
}

/** The failed result of a memory call the model can correct. */
function refused(message: string): ToolResult {
  return toErrorResult(createFailure('tool.invalid_arguments', message));
}

/**
 * Runs a call of `memory.read` or `memory.write` (settled now, in the step's unit). A read reads
 * the version the step's planner read, with the writes of the step's earlier calls; a write
 * stages its entry with the call's row.
 */
export async function callMemory(scope: CallScope, call: PreparedCall, calls: readonly PreparedCall[]): Promise<void> {
  const { env, live, runId, stepIndex } = scope;
  const access = memoryAccessOf(call.tool)!;
  const args = call.parsed as MemoryReadInput | MemoryWriteInput;
  if (!access.scopes.includes(args.scope)) {
    scope.settle(
      call,
      'failed',
      refused(`Memory scope '${args.scope}' is not open to this agent: use ${access.scopes.join(' or ')}`),
    );
    return;
  }
  if (access.kind === 'write') {
    const { key, value } = args as MemoryWriteInput;
    const json = value === null || value === undefined ? null : JSON.stringify(value);
    if (json !== null && Buffer.byteLength(json) > access.maxValueBytes) {
      scope.settle(
        call,
        'failed',
        refused(`The value of '${key}' is ${Buffer.byteLength(json)} bytes as JSON, more than ${access.maxValueBytes}`),
      );
      return;
    }
    const row = {
      scope: storedScope(live, args.scope),
      key,
      value: json,
      run_id: runId,
      tool_call_id: call.id,
      created_at: Date.now(),
    };
    live.driver.stage((writer) => writer.putMemory(row));
    scope.settle(call, 'succeeded', ok({ scope: args.scope, key, [json === null ? 'forgotten' : 'remembered']: true }));
    return;
  }
  let version = live.driver.memory.journal.get(stepIndex)?.memoryVersion ?? null;
  if (version === null) {
    await live.driver.flush();
    version = await env.store.memoryVersion();
  }
  const entries = (await readEntries(env, live, [args.scope], version))[args.scope]!;
  // The step's own earlier writes (staged with their calls, or committed before a crash).
  for (const earlier of calls) {
    if (earlier.index >= call.index || earlier.toolName !== MEMORY_WRITE || earlier.row?.status !== 'succeeded')
      continue;
    const write = earlier.parsed as MemoryWriteInput | undefined;
    if (!write || write.scope !== args.scope) continue;
    if (write.value === null || write.value === undefined) delete entries[write.key];
    else entries[write.key] = write.value;
  }
  const { key } = args as MemoryReadInput;
  const content =
    key === undefined ? { version, entries } : { version, key, value: entries[key] ?? null, found: key in entries };
  scope.settle(call, 'succeeded', ok(content));
}
