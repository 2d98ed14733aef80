/** Reads a Chat Completions stream: drafts out as they come, tool-call deltas gathered by index. */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { toUsage, type ModelOutput, type RawToolCall } from './model-output.js';

/** Callbacks of a stream read: every chunk (to reset the idle timer) and every content delta. */
export interface StreamHandlers {
  onChunk(): void;
  onDraft?: ((text: string) => void) | undefined;
}

function forward(onDraft: StreamHandlers['onDraft'], text: string): void {
  try {
    onDraft?.(text);
  } catch {
    // A failing draft listener must not fail the model call; drafts are never committed anyway.
  }
}

/** Consumes a stream into a model output; `finishReason` stays `null` if the stream ended early. */
export async function readStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  handlers: StreamHandlers,
): Promise<ModelOutput> {
  const output: ModelOutput = { content: '', refusal: '', toolCalls: [], finishReason: null };
  const calls = new Map<number, RawToolCall>();
  for await (const chunk of stream) {
    handlers.onChunk();
    const usage = toUsage(chunk.usage);
    if (usage) output.usage = usage;
    const choice = chunk.choices?.find((c) => c.index === 0) ?? chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    if (delta.content) {
      output.content += delta.content;
      forward(handlers.onDraft, delta.content);
    }
    if (delta.refusal) output.refusal += delta.refusal;
    for (const part of delta.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { name: '', arguments: '' };
      calls.set(part.index, call);
      const name = part.function?.name;
      // Some servers repeat the whole name in every delta; others send it once.
      if (name && name !== call.name) call.name += name;
      call.arguments += part.function?.arguments ?? '';
    }
    if (choice.finish_reason) output.finishReason = choice.finish_reason;
  }
  output.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return output;
}
