/**
 * Questions a tool asks a person in the middle of a call (an MCP server's elicitation among
 * them). Each is an `input` wait, a row of `approvals` bound to the call, like a `human.ask`
 * question; what differs is what its answer does:
 *
 * - **Stopped** (`ToolInputRequired`, MCP's `input_required` result): the call did nothing yet;
 *   its row is `waiting`, the run waits in `waiting_human` holding no actor, and once answered
 *   the call runs again with the answer (`ctx.input`), once. A refusal or an expiry fails the
 *   call. Wait ids `<call>.ask<n>`, one per round.
 * - **In flight** (`ctx.ask`, MCP's `elicitation/create` request): the call stays open while a
 *   person answers, in this process only; the answer goes back to the tool. After a restart the
 *   call's outcome is unknown (resolved by its effect class) and its open question is closed.
 *   Wait ids `<call>.elicit<attempt>.<n>`.
 */
import { createFailure } from '../../failure.js';
import type { ToolQuestion } from '../../tools/define-tool.js';
import { unusableSchema } from '../../tools/human-ask.js';
import { toErrorResult } from '../../tools/tool-result.js';
import { callRow } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { lastStoppedQuestion, stoppedQuestionId } from '../ledger/question-rows.js';
import type { CallScope } from './call-scope.js';
import { stageQuestion } from './human-waits.js';

/** Why a tool's question cannot be asked, as the call's failure, or null when it can. */
export function unaskable(call: PreparedCall, question: ToolQuestion) {
  if (typeof question.question !== 'string' || question.question.trim() === '') {
    return createFailure('tool.failed', `Tool '${call.toolName}' asked a question without text`);
  }
  const unusable = unusableSchema({
    ...(question.choices ? { choices: question.choices } : {}),
    ...(question.schema ? { schema: question.schema } : {}),
  });
  return unusable
    ? createFailure('tool.failed', `Tool '${call.toolName}' asked a question: ${unusable.message}`)
    : null;
}

/** Stages a tool's question as an `input` wait (and its `input_request` event); its id. */
export function stageToolQuestion(
  scope: CallScope,
  call: PreparedCall,
  id: string,
  question: ToolQuestion,
  options: { inFlight: boolean; state?: unknown },
): string {
  const server = question.from?.server !== undefined ? { server: question.from.server } : {};
  stageQuestion(scope, call, id, {
    kind: 'input',
    question: question.question,
    choices: question.choices ?? null,
    schema: question.schema ?? null,
    from: { tool: call.toolName, ...server, inFlight: options.inFlight },
    ...(options.inFlight ? {} : { state: options.state ?? null }),
  });
  return id;
}

/**
 * A call that stopped to ask: its row becomes `waiting` (it did nothing), and its next round of
 * questions a wait. A question that cannot be asked fails the call instead; null then.
 */
export function stopForQuestion(
  scope: CallScope,
  call: PreparedCall,
  question: ToolQuestion,
  state: unknown,
): string | null {
  const failure = unaskable(call, question);
  if (failure) {
    scope.settle(call, 'failed', toErrorResult(failure));
    return null;
  }
  const { driver } = scope.live;
  const last = lastStoppedQuestion(driver.memory.approvals, call.id);
  const round = last ? Number(last.id.slice(last.id.lastIndexOf('.ask') + 4)) + 1 : 1;
  const row = callRow(scope.runId, scope.stepIndex, call, { status: 'waiting' });
  call.row = row;
  driver.stageToolCall(row);
  return stageToolQuestion(scope, call, stoppedQuestionId(call.id, round), question, { inFlight: false, state });
}
