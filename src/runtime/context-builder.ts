/**
 * The context builder: the messages a planner sees at one step, fitted into a token budget,
 * and a report of what it did. Oldest session history is dropped first, then the oldest tool
 * outputs are cut to a preview; large outputs are already previews with an artifact reference.
 */
import type { PlannerMessage } from '../planner/types.js';
import type { MessageRow } from '../store/index.js';
import type { RunMemory } from './run-memory.js';
import { buildMessages } from './transcript.js';

/** What the context of one step held, stored with the step and shown in traces. */
export interface ContextReport {
  estimatedTokens: number;
  budgetTokens: number;
  /** Messages the planner was given. */
  included: number;
  /** Session history messages left out, oldest first, to fit the budget. */
  dropped: number;
  /** Tool calls whose output was cut to a preview to fit the budget. */
  truncated: string[];
  /** Messages replaced by a summary (none yet: Baton does not summarize). */
  summarized: number;
  /** Artifacts referenced instead of their full content. */
  artifacts: string[];
  /** What the planner itself did to the context (e.g. compaction after a context-length error). */
  notes: string[];
  /** Requests the planner made for this step (retries included). */
  attempts: number;
}

const PREVIEW_CHARS = 200;

/** Tokens of a message, estimated at four characters a token plus a little framing. */
export function estimateTokens(message: PlannerMessage): number {
  const toolCalls = message.role === 'assistant' && message.toolCalls ? JSON.stringify(message.toolCalls) : '';
  return Math.ceil((message.content.length + toolCalls.length) / 4) + 4;
}

/** Builds the messages of step `stepIndex` within `budgetTokens`, with a report. */
export function buildContext(
  history: MessageRow[],
  run: { id: string; input: string },
  stepIndex: number,
  memory: RunMemory,
  budgetTokens: number,
): { messages: PlannerMessage[]; report: ContextReport } {
  const messages = buildMessages(history, run, stepIndex, memory);
  const artifacts = [...memory.ledger.values()]
    .map((row) =>
      row.result ? (JSON.parse(row.result) as { artifact?: { sha256: string } }).artifact?.sha256 : undefined,
    )
    .filter((sha): sha is string => sha !== undefined);
  let total = messages.reduce((sum, m) => sum + estimateTokens(m), 0);
  // The run's own input is never dropped: history before it goes first, oldest first.
  const historyCount = () => messages.findIndex((m) => m.role === 'user' && m.content === run.input);
  let dropped = 0;
  while (total > budgetTokens && historyCount() > 0) {
    total -= estimateTokens(messages.shift()!);
    dropped += 1;
  }
  const truncated: string[] = [];
  for (let i = 0; i < messages.length && total > budgetTokens; i += 1) {
    const message = messages[i]!;
    if (message.role !== 'tool' || message.content.length <= PREVIEW_CHARS) continue;
    const before = estimateTokens(message);
    const cut: PlannerMessage = {
      ...message,
      content: `${message.content.slice(0, PREVIEW_CHARS)}\n[truncated to fit the context: ${message.content.length} characters in all]`,
    };
    messages[i] = cut;
    total += estimateTokens(cut) - before;
    truncated.push(message.toolCallId);
  }
  return {
    messages,
    report: {
      estimatedTokens: total,
      budgetTokens,
      included: messages.length,
      dropped,
      truncated,
      summarized: 0,
      artifacts,
      notes: [],
      attempts: 0,
    },
  };
}
