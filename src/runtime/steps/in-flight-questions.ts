/**
 * Questions asked while a call stays in flight (`ctx.ask`; an MCP server's `elicitation/create`
 * request): the call's process waits for the answer and hands it to the tool. The question is an
 * `input` wait like any other (listed as the run's `pending_input`, answered on the same route,
 * once), committed before anyone is asked, but the run stays `executing`: the call holds its
 * actor and its connection. What the tool gets: the answer (`accept`), a refusal (`decline`),
 * or `cancel` when the wait expired or the run ended first. After a restart the request that
 * asked is gone with the process: the question is closed and the call's outcome is unknown,
 * resolved by its effect class (docs/architecture.md §4).
 */
import type { ApprovalRow } from '../../store/index.js';
import type { ToolAnswer, ToolQuestion } from '../../tools/define-tool.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import type { CallScope, UnknownOutcome } from './call-scope.js';
import { stageToolQuestion, unaskable } from './tool-questions.js';
import { decidedRow, inFlightQuestionId, listenInFlight } from '../ledger/question-rows.js';
import { asksInFlight } from '../model/rows.js';

/** Who closes a question whose call did not wait for its answer. */
export const CLOSED_BY = 'baton:call-ended';

/** How often a question's process looks for an answer given by another process. */
const POLL_MS = 250;

/** The tool's answer from a decided question. */
function answerOf(row: ApprovalRow): ToolAnswer {
  if (row.status === 'approved') {
    const answer = row.answer ? (JSON.parse(row.answer) as { answer?: unknown }).answer : undefined;
    return { action: 'accept', answer, by: row.decided_by ?? '' };
  }
  if (row.status === 'rejected') return { action: 'decline', by: row.decided_by ?? '', reason: row.reason };
  return { action: 'cancel', reason: row.reason ?? 'the question expired' };
}

/** The questions of one attempt of a call: its `ctx.ask`, and what ends them with the call. */
export interface InFlightAsker {
  ask(question: ToolQuestion): Promise<ToolAnswer>;
  /**
   * The call is over (it returned, threw or timed out): its questions still open are closed (an
   * answer now would reach no one), in the unit that settles the call. A decision another runtime
   * already wrote on a question stands.
   */
  end(): Promise<void>;
}

/**
 * The `ctx.ask` of one attempt of a call: each question becomes a committed `input` wait, and
 * the answer comes back from whoever decides it (here at once, from another process within a
 * poll), or `cancel` at its expiry or when the run stops the call.
 */
export function inFlightAsker(scope: CallScope, call: PreparedCall, attempt: number): InFlightAsker {
  let asked = 0;
  let ended = false;
  /** The questions being waited on, and how to stop waiting on each. */
  const open = new Map<string, () => void>();
  const { live } = scope;
  const { driver } = live;
  const ask = async (question: ToolQuestion): Promise<ToolAnswer> => {
    const failure = unaskable(call, question);
    if (failure) return { action: 'cancel', reason: failure.message };
    if (scope.signal.aborted || ended) return { action: 'cancel', reason: 'the run stopped the call' };
    asked += 1;
    const id = inFlightQuestionId(call.id, attempt, asked);
    stageToolQuestion(scope, call, id, question, { inFlight: true });
    // Open from now on: a call that ends before its answer closes it (`end`).
    open.set(id, () => undefined);
    await driver.flush();
    if (ended) return { action: 'cancel', reason: 'the call ended before it was answered' };
    driver.announceQuestion();
    const waited = await waitForDecision(scope, id, (stop) => open.set(id, stop));
    open.delete(id);
    if (ended) return { action: 'cancel', reason: 'the call ended before it was answered' };
    const decided = waited === 'expired' ? null : waited;
    if (decided?.elsewhere && !scope.signal.aborted) {
      // Decided by another runtime on the row itself: its event is written here, with the run's.
      writeDecidedElsewhere(scope, decided.row);
      await driver.flush();
    }
    if (decided) return answerOf(decided.row);
    // Expired or stopped before anyone decided: closed here, so no one can answer it later.
    const row = driver.memory.approvals.get(id);
    // Its own timer says so (a timer may wake a millisecond before the wall clock reaches the instant).
    const expired =
      waited === 'expired' ||
      (row?.expires_at !== null && row?.expires_at !== undefined && row.expires_at <= Date.now());
    const reason = expired ? 'no one answered before it expired' : 'the run stopped the call';
    if (!scope.signal.aborted) {
      // Another runtime may have decided it on the row a moment ago: that decision stands.
      const stored = await scope.env.store.getApproval(id).catch(() => undefined);
      if (stored && stored.status !== 'pending') {
        driver.memory.approvals.set(id, stored);
        writeDecidedElsewhere(scope, stored);
        await driver.flush();
        return answerOf(stored);
      }
      close(scope, id, expired ? 'expired' : 'rejected', reason);
      await driver.flush();
      const after = driver.memory.approvals.get(id);
      if (after && after.decided_by !== CLOSED_BY && after.status !== 'expired') return answerOf(after);
    }
    return { action: 'cancel', reason };
  };
  const end = async () => {
    ended = true;
    for (const [id, stop] of [...open]) {
      stop();
      open.delete(id);
      const stored = await scope.env.store.getApproval(id).catch(() => undefined);
      if (stored && stored.status !== 'pending') {
        driver.memory.approvals.set(id, stored);
        writeDecidedElsewhere(scope, stored);
      } else close(scope, id, 'rejected', 'the call ended before it was answered');
    }
  };
  return { ask, end };
}

/** The `input_result` of a question another runtime decided on its row. */
function writeDecidedElsewhere(scope: Pick<CallScope, 'live'>, row: ApprovalRow): void {
  const { driver } = scope.live;
  const given = answerOf(row);
  driver.stage(() =>
    driver.writeEvent('input_result', {
      input_id: row.id,
      ...(given.action === 'accept' ? { answer: given.answer } : { declined: true }),
      by: row.decided_by,
      reason: row.reason,
    }),
  );
}

/** The decided question (`elsewhere`: by another runtime), `expired` at its expiry, or null when the call is stopped. */
function waitForDecision(
  scope: CallScope,
  id: string,
  onWaiting: (stop: () => void) => void,
): Promise<{ row: ApprovalRow; elsewhere: boolean } | 'expired' | null> {
  const { live, env, signal } = scope;
  const { driver } = live;
  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    const done = (decided: { row: ApprovalRow; elsewhere: boolean } | 'expired' | null) => {
      unlisten();
      for (const timer of timers) clearTimeout(timer);
      clearInterval(poll);
      signal.removeEventListener('abort', onAbort);
      resolve(decided);
    };
    const onAbort = () => done(null);
    onWaiting(() => done(null));
    const unlisten = listenInFlight(live, id, (row) => done({ row, elsewhere: false }));
    signal.addEventListener('abort', onAbort, { once: true });
    // A decision another process committed (its row decided in the store).
    const poll = setInterval(() => {
      void env.store.getApproval(id).then(
        (row) => {
          if (!row || row.status === 'pending') return;
          driver.memory.approvals.set(id, row);
          done({ row, elsewhere: true });
        },
        () => undefined,
      );
    }, POLL_MS);
    const row = driver.memory.approvals.get(id);
    if (row && row.status !== 'pending') return done({ row, elsewhere: false });
    const expiresAt = row?.expires_at ?? null;
    if (expiresAt !== null) timers.push(setTimeout(() => done('expired'), Math.max(0, expiresAt - Date.now())));
  });
}

/** Closes a question still pending (expired, or its call no longer waits for it), with its event. */
function close(scope: Pick<CallScope, 'live'>, id: string, status: 'expired' | 'rejected', reason: string): void {
  const { driver } = scope.live;
  const current = driver.memory.approvals.get(id);
  if (!current || current.status !== 'pending') return;
  const by = status === 'expired' ? 'baton:expiry' : CLOSED_BY;
  const decision = {
    status,
    resolution: 'reject' as const,
    by,
    reason,
    at: Date.now(),
    answer: null,
    args_hash: current.args_hash,
  };
  // Closed in memory at once (what the run checks before it may finish, and what a decision
  // here compares with); the row and its event land with the run's next write.
  driver.memory.approvals.set(id, decidedRow(current, decision));
  driver.stage((writer) => writer.decideApproval(id, decision));
  driver.emit('input_result', {
    input_id: id,
    decision: status === 'expired' ? 'expired' : 'closed',
    by,
    reason,
    final: true,
  });
}

/**
 * The questions an interrupted call asked in flight and never heard back on: the process that
 * held the request is gone, so they are closed (an answer now would reach no one) before the
 * call is resolved by its effect class.
 */
export function closeInFlightQuestions(scope: CallScope, call: PreparedCall, cause: UnknownOutcome | null): void {
  if (cause !== 'interrupted') return;
  for (const row of scope.live.driver.memory.approvals.values()) {
    if (row.status !== 'pending' || !asksInFlight(row)) continue;
    if (!(JSON.parse(row.tool_call_ids) as string[]).includes(call.id)) continue;
    close(scope, row.id, 'rejected', 'the request that asked it ended with the process that held it');
  }
}
