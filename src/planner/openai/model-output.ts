/** What one request returned, whether it came as JSON or as a stream. */
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';

/** One tool call as the model wrote it: a wire name and raw JSON arguments. */
export interface RawToolCall {
  name: string;
  arguments: string;
}

/** The model's reply to one request, before it becomes a decision. */
export interface ModelOutput {
  content: string;
  refusal: string;
  toolCalls: RawToolCall[];
  /** `null` when a stream ended before the model finished. */
  finishReason: string | null;
  /** Absent when the server did not report usage. */
  usage?: { inputTokens: number; outputTokens: number };
}

/** Usage as Baton counts it. */
export function toUsage(usage: CompletionUsage | null | undefined): ModelOutput['usage'] {
  if (!usage) return undefined;
  return { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
}

/** The output of a JSON (non-streamed) completion. */
export function fromCompletion(completion: ChatCompletion): ModelOutput {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const toolCalls: RawToolCall[] = [];
  for (const call of message?.tool_calls ?? []) {
    if (call.type === 'function')
      toolCalls.push({ name: call.function.name, arguments: call.function.arguments ?? '' });
  }
  const output: ModelOutput = {
    content: message?.content ?? '',
    refusal: message?.refusal ?? '',
    toolCalls,
    finishReason: choice?.finish_reason ?? 'stop',
  };
  const usage = toUsage(completion.usage);
  if (usage) output.usage = usage;
  return output;
}
