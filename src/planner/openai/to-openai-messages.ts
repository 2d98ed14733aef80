/** Converts the planner's context into Chat Completions messages and tools. */
import { createHash } from 'node:crypto';
import type {
  ChatCompletionContentPart,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { PlannerMessage, PlannerTool } from '../types.js';
import type { ToolNames } from './tool-names.js';

// OpenAI rejects tool-call ids longer than 40 characters; some compatible servers reject
// anything but letters, digits, `_` and `-`.
const MAX_CALL_ID = 40;

/**
 * The id of a tool call on the wire: the runtime's id without the run prefix every id of the
 * run shares, made valid. Deterministic, so an assistant call and its tool result agree.
 */
export function toWireCallId(runId: string, id: string): string {
  const local = id.startsWith(`${runId}.`) ? id.slice(runId.length + 1) : id;
  const wire = local.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
  if (wire.length <= MAX_CALL_ID) return wire;
  return `call_${createHash('sha256')
    .update(id)
    .digest('hex')
    .slice(0, MAX_CALL_ID - 5)}`;
}

function toArguments(args: unknown): string {
  // Arguments that were not valid JSON are journaled as the raw string: the model sees its own text.
  if (typeof args === 'string') return args;
  return JSON.stringify(args ?? {});
}

/**
 * One user message with the images of the tool messages just before it: a tool message carries
 * text only in Chat Completions, and nothing may come between an assistant's tool calls and
 * their results, so the images follow them, each introduced by the call that returned it.
 */
function imageMessage(runId: string, tools: readonly ToolMessage[]): ChatCompletionMessageParam | null {
  const parts: ChatCompletionContentPart[] = [];
  for (const message of tools) {
    for (const image of message.images ?? []) {
      if (image.data === undefined) continue;
      const call = toWireCallId(runId, message.toolCallId);
      parts.push({
        type: 'text',
        text: `Image returned by tool call ${call} (${message.tool}), artifact sha256:${image.sha256}:`,
      });
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mediaType};base64,${image.data}` } });
    }
  }
  return parts.length > 0 ? { role: 'user', content: parts } : null;
}

type ToolMessage = Extract<PlannerMessage, { role: 'tool' }>;

/**
 * The messages of one request: the instructions as the system message, then the context. With
 * `images`, the images tool calls returned follow their results as a user message.
 */
export function toOpenAIMessages(
  instructions: string,
  messages: readonly PlannerMessage[],
  names: ToolNames,
  runId: string,
  images = false,
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (instructions) out.push({ role: 'system', content: instructions });
  let results: ToolMessage[] = [];
  const flushImages = () => {
    const message = images ? imageMessage(runId, results) : null;
    if (message) out.push(message);
    results = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushImages();
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content });
    } else if (message.role === 'tool') {
      out.push({ role: 'tool', tool_call_id: toWireCallId(runId, message.toolCallId), content: message.content });
      results.push(message);
    } else if (message.toolCalls?.length) {
      out.push({
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.toolCalls.map((call) => ({
          id: toWireCallId(runId, call.id),
          type: 'function',
          function: { name: names.toWire(call.tool), arguments: toArguments(call.args) },
        })),
      });
    } else {
      out.push({ role: 'assistant', content: message.content });
    }
  }
  flushImages();
  return out;
}

/** The tools of one request, named as the API accepts. */
export function toOpenAITools(tools: readonly PlannerTool[], names: ToolNames): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: names.toWire(tool.name), description: tool.description, parameters: tool.parameters },
  }));
}
