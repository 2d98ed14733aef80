/**
 * The context builder: the messages a planner sees at one step, fitted into a token budget,
 * and a report of what it did. To fit, the oldest session history is dropped first, then the
 * oldest tool outputs are cut to a preview, then the run's own oldest steps are left out (the
 * input and the latest step always stay); large outputs are already previews with an artifact
 * reference.
 *
 * It is incremental: a live run keeps its transcript between steps (`Transcript`), each past
 * step turned into messages and counted once, and everything it drops or cuts stays dropped or
 * cut (content only grows, so a later step never has more room), so a step costs what is new
 * plus what fits the budget, not the whole history. A restored run builds it once. The report
 * names what changed at this step (newly cut calls, newly referenced artifacts) and counts the
 * rest, so its size does not grow with the run.
 */
import type { PlannerMessage } from '../../planner/types.js';
import type { MessageRow } from '../../store/index.js';
import { toolCallId } from '../model/ids.js';
import type { RunMemory } from '../drive/run-memory.js';
import type { Block, ContextReport, Transcript } from '../model/types.js';
import { imagesOf, toObservation } from './transcript.js';

const PREVIEW_CHARS = 200;

/** Tokens of a message, estimated at four characters a token plus a little framing. */
export function estimateTokens(message: PlannerMessage): number {
  const toolCalls = message.role === 'assistant' && message.toolCalls ? JSON.stringify(message.toolCalls) : '';
  return Math.ceil((message.content.length + toolCalls.length) / 4) + 4;
}

/** An empty transcript, for a run that has not built a context in this process yet. */
export function createTranscript(): Transcript {
  return {
    builtThrough: 0,
    blocks: [],
    firstKept: 0,
    cutThrough: 0,
    blockTokens: 0,
    history: null,
    historyDropped: 0,
    historyTokens: 0,
    truncatedTotal: 0,
    artifacts: new Set(),
  };
}

function omittedNote(steps: number): PlannerMessage {
  return { role: 'user', content: `[${steps} earlier step(s) of this run are left out to fit the context]` };
}

/** Adds the blocks of the steps not built yet; returns the artifacts they reference first. */
function extend(transcript: Transcript, run: { id: string }, stepIndex: number, memory: RunMemory): string[] {
  const added: string[] = [];
  for (let step = transcript.builtThrough; step < stepIndex; step += 1) {
    const decision = memory.journal.get(step)?.decision;
    if (!decision || decision.type !== 'tool_calls') continue;
    const calls = decision.calls.map((call, index) => ({ id: toolCallId(run.id, step, index), ...call }));
    const messages: PlannerMessage[] = [{ role: 'assistant', content: decision.text ?? '', toolCalls: calls }];
    for (const call of calls) {
      const row = memory.ledger.get(call.id);
      const images = row ? imagesOf(row).map(({ sha256, mediaType }) => ({ sha256, mediaType })) : [];
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        tool: call.tool,
        content: row ? toObservation(row) : 'Not run.',
        ...(images.length > 0 ? { images } : {}),
      });
      const sha = row?.result
        ? (JSON.parse(row.result) as { artifact?: { sha256: string } }).artifact?.sha256
        : undefined;
      for (const ref of [...(sha ? [sha] : []), ...images.map((image) => image.sha256)]) {
        if (transcript.artifacts.has(ref)) continue;
        transcript.artifacts.add(ref);
        added.push(ref);
      }
    }
    const tokens = messages.reduce((sum, m) => sum + estimateTokens(m), 0);
    transcript.blocks.push({ messages, tokens });
    transcript.blockTokens += tokens;
  }
  transcript.builtThrough = Math.max(transcript.builtThrough, stepIndex);
  return added;
}

/** Cuts the long outputs of one block to previews; returns the tokens saved and the calls cut. */
function cut(block: Block): { saved: number; calls: string[] } {
  let saved = 0;
  const calls: string[] = [];
  block.messages = block.messages.map((message) => {
    if (message.role !== 'tool' || message.content.length <= PREVIEW_CHARS) return message;
    // A preview keeps no images: cutting is to make room.
    const preview: PlannerMessage = {
      role: 'tool',
      toolCallId: message.toolCallId,
      tool: message.tool,
      content: `${message.content.slice(0, PREVIEW_CHARS)}\n[truncated to fit the context: ${message.content.length} characters in all]`,
    };
    saved += estimateTokens(message) - estimateTokens(preview);
    calls.push(message.toolCallId);
    return preview;
  });
  block.tokens -= saved;
  return { saved, calls };
}

/** Builds the messages of step `stepIndex` within `budgetTokens`, with a report. */
export function buildContext(
  history: MessageRow[],
  run: { id: string; input: string },
  stepIndex: number,
  memory: RunMemory,
  budgetTokens: number,
  transcript: Transcript = createTranscript(),
): { messages: PlannerMessage[]; report: ContextReport } {
  // A step asked again (after a crash, a retry) over a transcript built further: start over.
  if (transcript.builtThrough > stepIndex) Object.assign(transcript, createTranscript());
  if (transcript.history === null) {
    transcript.history = history
      .filter((m) => m.run_id !== run.id)
      .map((m) => {
        const message: PlannerMessage =
          m.role === 'assistant' ? { role: 'assistant', content: m.content } : { role: 'user', content: m.content };
        return { message, tokens: estimateTokens(message) };
      });
    transcript.historyTokens = transcript.history.reduce((sum, h) => sum + h.tokens, 0);
  }
  const kept = transcript.history;
  const newArtifacts = extend(transcript, run, stepIndex, memory);
  const input: PlannerMessage = { role: 'user', content: run.input };
  const note = () => (transcript.firstKept > 0 ? estimateTokens(omittedNote(transcript.firstKept)) : 0);
  const total = () => transcript.historyTokens + estimateTokens(input) + note() + transcript.blockTokens;

  // The run's own input is never dropped: history before it goes first, oldest first.
  while (total() > budgetTokens && transcript.historyDropped < kept.length) {
    transcript.historyTokens -= kept[transcript.historyDropped]!.tokens;
    transcript.historyDropped += 1;
  }
  // Then the oldest tool outputs are cut to previews.
  const truncated: string[] = [];
  transcript.cutThrough = Math.max(transcript.cutThrough, transcript.firstKept);
  while (total() > budgetTokens && transcript.cutThrough < transcript.blocks.length) {
    const { saved, calls } = cut(transcript.blocks[transcript.cutThrough]!);
    transcript.blockTokens -= saved;
    transcript.truncatedTotal += calls.length;
    truncated.push(...calls);
    transcript.cutThrough += 1;
  }
  // Then the run's oldest steps are left out; the latest one always stays.
  while (total() > budgetTokens && transcript.firstKept < transcript.blocks.length - 1) {
    transcript.blockTokens -= transcript.blocks[transcript.firstKept]!.tokens;
    // A block left out is never shown again: its messages need not be kept.
    transcript.blocks[transcript.firstKept] = { messages: [], tokens: 0 };
    transcript.firstKept += 1;
  }

  const messages: PlannerMessage[] = kept.slice(transcript.historyDropped).map((h) => h.message);
  messages.push(input);
  if (transcript.firstKept > 0) messages.push(omittedNote(transcript.firstKept));
  for (let i = transcript.firstKept; i < transcript.blocks.length; i += 1)
    messages.push(...transcript.blocks[i]!.messages);
  return {
    messages,
    report: {
      estimatedTokens: total(),
      budgetTokens,
      included: messages.length,
      dropped: transcript.historyDropped,
      droppedSteps: transcript.firstKept,
      truncated,
      truncatedTotal: transcript.truncatedTotal,
      summarized: 0,
      artifacts: newArtifacts,
      artifactsTotal: transcript.artifacts.size,
      notes: [],
      attempts: 0,
    },
  };
}
