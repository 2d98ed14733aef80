/**
 * The rows of the questions a tool asks mid-call (`steps/tool-questions.ts` asks them): their
 * ids, what their request holds, the answer a stopped call runs again with, and the in-process
 * listeners of questions asked in flight, told when one is decided here.
 */
import type { ApprovalDecision, ApprovalRow, UnitWriter } from '../../store/index.js';
import type { ToolInput } from '../../tools/define-tool.js';
import type { LiveRun } from '../drive/env.js';

/** The id of round `round` (1, 2, …) of the questions a stopped call asks. */
export function stoppedQuestionId(callId: string, round: number): string {
  return `${callId}.ask${round}`;
}

/** The id of question `n` a call asks in flight during attempt `attempt`. */
export function inFlightQuestionId(callId: string, attempt: number, n: number): string {
  return `${callId}.elicit${attempt}.${n}`;
}

/** What an `input` wait's request holds: a question (the model's, or a tool's, `from`), `state` never shown. */
export interface QuestionRequest {
  kind: 'input';
  question: string;
  choices: string[] | null;
  schema: Record<string, unknown> | null;
  /** A tool's question: the tool that asks (and its MCP server), and whether its call waits in flight. */
  from?: { tool: string; server?: string; inFlight: boolean };
  /** A stopped call's state, given back with the answer. */
  state?: unknown;
}

/** The latest round of questions a stopped call asked, if any. */
export function lastStoppedQuestion(approvals: ReadonlyMap<string, ApprovalRow>, callId: string): ApprovalRow | null {
  let last: ApprovalRow | null = null;
  for (let round = 1; ; round += 1) {
    const row = approvals.get(stoppedQuestionId(callId, round));
    if (!row) return last;
    last = row;
  }
}

/** The answer a stopped call runs again with: its last round, answered. */
export function answeredInput(row: ApprovalRow | null): ToolInput | undefined {
  if (!row || row.status !== 'approved' || row.resolution !== 'answer') return undefined;
  const request = JSON.parse(row.request ?? '{}') as Partial<QuestionRequest>;
  const answer = row.answer ? (JSON.parse(row.answer) as { answer?: unknown }).answer : undefined;
  return { answer, by: row.decided_by ?? '', state: request.state ?? null };
}

/** True for a wait that is a tool's question, stopped or in flight (not `human.ask`). */
export function isToolQuestion(row: Pick<ApprovalRow, 'kind' | 'request'>): boolean {
  if (row.kind !== 'input' || !row.request) return false;
  return typeof (JSON.parse(row.request) as { from?: unknown }).from === 'object';
}

/**
 * Decides a wait the runtime itself ends (a child run's end, a task's end), in the run's unit:
 * the stored decision, the row in the run's memory, and the run due at once until it leaves the
 * wait (a crash before that resumes it on open). Returns the decided row.
 */
export function decideByRuntime(
  writer: UnitWriter,
  live: LiveRun,
  current: ApprovalRow,
  decision: Omit<ApprovalDecision, 'args_hash' | 'resolution'>,
): ApprovalRow {
  const stored: ApprovalDecision = { ...decision, resolution: null, args_hash: current.args_hash };
  writer.decideApproval(current.id, stored);
  const decided = decidedRow(current, stored);
  live.driver.memory.approvals.set(current.id, decided);
  writer.setWakeAt(live.driver.runId, 0);
  return decided;
}

/** A wait's row once `decision` decided it: what memory and the API show of the stored decision. */
export function decidedRow(row: ApprovalRow, decision: ApprovalDecision): ApprovalRow {
  return {
    ...row,
    status: decision.status,
    resolution: decision.resolution,
    decided_by: decision.by,
    reason: decision.reason,
    decided_at: decision.at,
    answer: decision.answer,
    args_hash: decision.args_hash,
  };
}

/** The in-process listeners of a run's questions in flight. */
const listeners = new WeakMap<LiveRun, Map<string, (row: ApprovalRow) => void>>();

/** Listens for the decision of question `id` of `live` taken here; returns the unsubscribe function. */
export function listenInFlight(live: LiveRun, id: string, listener: (row: ApprovalRow) => void): () => void {
  let own = listeners.get(live);
  if (!own) listeners.set(live, (own = new Map()));
  own.set(id, listener);
  return () => own.delete(id);
}

/** Tells the call waiting on `row` (a question in flight of `live`) that it was decided here. */
export function tellInFlight(live: LiveRun, row: ApprovalRow): void {
  listeners.get(live)?.get(row.id)?.(row);
}
