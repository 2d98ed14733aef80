/** Turns a model output into a decision, or says why it cannot: empty, or a refusal. */
import type { Decision } from '../types.js';
import type { ModelOutput } from './model-output.js';
import type { ToolNames } from './tool-names.js';

/** A decision, an empty reply, or a refusal with its text. */
export type DecisionResult =
  { type: 'decision'; decision: Decision } | { type: 'empty' } | { type: 'refused'; refusal: string };

function parseArguments(raw: string): { args: unknown; argsError?: string } {
  // Tools without parameters are often called with no arguments at all.
  if (raw.trim() === '') return { args: {} };
  try {
    return { args: JSON.parse(raw) as unknown };
  } catch (error) {
    return { args: raw, argsError: `Arguments are not valid JSON: ${(error as Error).message}` };
  }
}

/** The decision of a model output: tool calls (with any text), else the text as the final answer. */
export function toDecision(output: ModelOutput, names: ToolNames): DecisionResult {
  if (output.refusal.trim()) return { type: 'refused', refusal: output.refusal };
  const text = output.content.trim() ? output.content : undefined;
  const calls = output.toolCalls.filter((call) => call.name);
  if (calls.length > 0) {
    const decision: Decision = {
      type: 'tool_calls',
      calls: calls.map((call) => ({ tool: names.fromWire(call.name), ...parseArguments(call.arguments) })),
    };
    if (text !== undefined) decision.text = text;
    return { type: 'decision', decision };
  }
  if (text !== undefined) return { type: 'decision', decision: { type: 'final', answer: text } };
  if (output.finishReason === 'content_filter') {
    return { type: 'refused', refusal: 'The reply was withheld by the content filter.' };
  }
  return { type: 'empty' };
}
