/**
 * What a fork copies from its source, worked out from the source's rows alone (no I/O): the
 * steps before the fork's step — their journaled decisions, ledger rows, waits and events,
 * the artifacts they stored (by reference) — and the session history the source was given.
 * Copies carry the fork's ids (every id of a run starts with the run's id), never run again,
 * and say where they came from: a ledger row's `copied_from` is the source's row, its
 * idempotency key stays the source's. Events are copied up to the first one of the fork's
 * step, so the fork's log, folded, reaches the state the source's reached there.
 */
import type { HandoffFrame, Usage } from '../../../machines/types.js';
import { decisionSchema } from '../../planner/types.js';
import type { ApprovalRow, EventRow, ForkSource, MessageRow, StepRow, ToolCallRow } from '../../store/index.js';
import { createRunMemory, type RunMemory } from '../drive/run-memory.js';
import { compensatedCallOf } from '../model/rows.js';

/** The rows of a fork's first unit that come from its source. */
export interface ForkCopy {
  steps: StepRow[];
  toolCalls: ToolCallRow[];
  approvals: ApprovalRow[];
  /** The source's events before the fork's step (after its `run.created`), renamed. */
  events: Pick<EventRow, 'type' | 'data' | 'created_at'>[];
  /** The session history the source was given, for the fork's own session. */
  messages: Omit<MessageRow, 'id'>[];
  /** Artifacts the copied steps stored. */
  artifacts: string[];
  /** Budget waits among the copied steps: the fork numbers its own after them. */
  budgetAsks: number;
  /** Pauses among the copied steps, so the fork's own are numbered after them. */
  pauses: number;
  /** The handoff stack the copied steps left (the last copied `handoff` event's): the fork's agent on top plans its step. */
  handoffStack: HandoffFrame[];
  /** The copied journal, ledger and waits, as the fork's driver starts with them. */
  memory: RunMemory;
}

// Values under these keys are a tool's, a model's or a person's words: copied as they are.
const OPAQUE: ReadonlySet<string> = new Set([
  'args',
  'result',
  'content',
  'output',
  'answer',
  'text',
  'input',
  'schema',
]);

/** Renames the ids of run `from` to those of run `to`: the run's own id, and every id made from it. */
export function idRenamer(from: string, to: string): (value: string) => string {
  const prefix = `${from}.`;
  return (value) => (value === from ? to : value.startsWith(prefix) ? `${to}.${value.slice(prefix.length)}` : value);
}

/** A JSON value with the ids in it renamed, except under keys that hold someone's words. */
function renamedJson(value: unknown, rename: (id: string) => string): unknown {
  if (typeof value === 'string') return rename(value);
  if (Array.isArray(value)) return value.map((item) => renamedJson(item, rename));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = OPAQUE.has(key) ? inner : renamedJson(inner, rename);
  return out;
}

function renamedText(text: string | null, rename: (id: string) => string): string | null {
  return text === null ? null : JSON.stringify(renamedJson(JSON.parse(text), rename));
}

/** The handoff stack the last `handoff` event of these (renamed) events left; empty when none handed over. */
function stackOfEvents(events: readonly { type: string; data: string }[]): HandoffFrame[] {
  const last = events.findLast((event) => event.type === 'handoff');
  if (!last) return [];
  const stack = (JSON.parse(last.data) as { handoff_stack?: Record<string, unknown>[] }).handoff_stack ?? [];
  return stack.map((entry) => ({
    agent: String(entry.agent),
    step: Number(entry.step),
    callId: String(entry.tool_call_id),
    tools: Array.isArray(entry.tools) ? entry.tools.map(String) : [],
    instructions: typeof entry.instructions_sha256 === 'string' ? entry.instructions_sha256 : null,
  }));
}

/**
 * The seq of the source's first event of step `atStep` or later: the first after `run.created`
 * that names a step at or past it. Everything before it happened in the copied steps.
 */
export function cutSeq(events: readonly EventRow[], atStep: number): number {
  for (const event of events) {
    if (event.seq <= 1) continue;
    const step = (JSON.parse(event.data) as { step_index?: unknown }).step_index;
    if (typeof step === 'number' && step >= atStep) return event.seq;
  }
  return (events[events.length - 1]?.seq ?? 0) + 1;
}

/** What a fork of `source` at step `atStep` copies, with the fork's id `forkId` and session `sessionId`. */
export function copyPrefix(source: ForkSource, atStep: number, forkId: string, sessionId: string): ForkCopy {
  const sourceId = source.run.id;
  const rename = idRenamer(sourceId, forkId);
  const memory = createRunMemory();
  const steps = source.steps
    .filter((row) => row.step_index < atStep)
    .map((row): StepRow => ({ ...row, run_id: forkId, context: renamedText(row.context, rename) }));
  for (const row of steps) {
    memory.journal.set(row.step_index, {
      decision: decisionSchema.parse(JSON.parse(row.decision)),
      usage: JSON.parse(row.usage) as Usage,
      toolVersions: row.tool_versions === null ? null : (JSON.parse(row.tool_versions) as Record<string, string>),
      agent: row.agent ?? null,
      memoryVersion: row.memory_version ?? null,
    });
  }
  // A compensation undoes a call at the run's end, after every step: never part of a prefix.
  const toolCalls = source.toolCalls
    .filter((row) => row.step_index < atStep && compensatedCallOf(row) === null)
    .map((row): ToolCallRow => ({
      ...row,
      id: rename(row.id),
      run_id: forkId,
      copied_from: row.id,
      idempotency_key: row.idempotency_key ?? row.id,
    }));
  for (const row of toolCalls) memory.ledger.set(row.id, row);
  const approvals = source.approvals
    .filter((row) => row.step_index < atStep)
    .map((row): ApprovalRow => ({
      ...row,
      id: rename(row.id),
      run_id: forkId,
      tool_call_ids: renamedText(row.tool_call_ids, rename)!,
      request: renamedText(row.request, rename),
      answer: renamedText(row.answer, rename),
    }));
  for (const row of approvals) memory.approvals.set(row.id, row);
  const cut = cutSeq(source.events, atStep);
  const copied = source.events.filter((row) => row.seq > 1 && row.seq < cut);
  const artifacts = new Set<string>();
  for (const row of copied) {
    const sha = row.type === 'artifact' ? (JSON.parse(row.data) as { sha256?: unknown }).sha256 : undefined;
    if (typeof sha === 'string') artifacts.add(sha);
  }
  return {
    steps,
    toolCalls,
    approvals,
    events: copied.map((row) => ({ type: row.type, data: renamedText(row.data, rename)!, created_at: row.created_at })),
    messages: historyOf(source, sessionId),
    artifacts: [...artifacts],
    budgetAsks: approvals.filter((row) => row.kind === 'budget').length,
    pauses: approvals.filter((row) => row.kind === 'pause').length,
    handoffStack: stackOfEvents(copied.map((row) => ({ type: row.type, data: renamedText(row.data, rename)! }))),
    memory,
  };
}

/**
 * The session history the source's planner was given: the messages of its session from before
 * it (another run's question and answer), not its own nor any later run's. Copied without the
 * runs they came from, so the fork's session stands on its own.
 */
function historyOf(source: ForkSource, sessionId: string): Omit<MessageRow, 'id'>[] {
  const { run } = source;
  return source.messages
    .filter((row) => row.run_id !== run.id && row.created_at <= run.created_at)
    .map((row) => ({
      session_id: sessionId,
      run_id: null,
      role: row.role,
      content: row.content,
      created_at: row.created_at,
    }));
}
