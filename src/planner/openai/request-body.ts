/** The Chat Completions body of one request of a step. */
import type { PlannerMessage, PlannerTool } from '../types.js';
import type { RequestBody } from './call-model.js';
import { toOpenAIMessages, toOpenAITools } from './to-openai-messages.js';
import type { ToolNames } from './tool-names.js';

/** The field that carries the completion limit: newer OpenAI models want `max_completion_tokens`, some servers `max_tokens`. */
export const COMPLETION_LIMIT_FIELDS = ['max_completion_tokens', 'max_tokens'] as const;
export type CompletionLimitField = (typeof COMPLETION_LIMIT_FIELDS)[number];

/** The model settings every request of a planner shares. */
export interface BodySettings {
  model: string;
  instructions: string;
  maxCompletionTokens: number;
  completionLimitField: CompletionLimitField;
  temperature?: number | undefined;
  /** Give the model the images tool calls returned (as `image_url` parts). */
  images: boolean;
}

/** Builds the body for the given messages; tools are offered only when there are some. */
export function toRequestBody(
  settings: BodySettings,
  runId: string,
  messages: readonly PlannerMessage[],
  tools: readonly PlannerTool[],
  names: ToolNames,
): RequestBody {
  const body: RequestBody = {
    model: settings.model,
    messages: toOpenAIMessages(settings.instructions, messages, names, runId, settings.images),
  };
  body[settings.completionLimitField] = settings.maxCompletionTokens;
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  // The API rejects `tool_choice` and `parallel_tool_calls` without tools.
  if (tools.length > 0) {
    body.tools = toOpenAITools(tools, names);
    body.tool_choice = 'auto';
    body.parallel_tool_calls = true;
  }
  return body;
}
