/** Token and cost estimates, checked against a run's budgets before a call is made. */
import type { PlannerEstimate, PlannerMessage, PlannerTool } from '../types.js';

/** Prices of a model in US dollars per million tokens. */
export interface ModelPrices {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** Tokens of a text, estimated as characters / 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Characters of the prompt a request sends: instructions, messages (with their tool calls) and tool schemas. */
export function promptChars(
  instructions: string,
  messages: readonly PlannerMessage[],
  tools: readonly PlannerTool[],
): number {
  let chars = instructions.length;
  for (const message of messages) {
    chars += message.content.length;
    if (message.role === 'assistant' && message.toolCalls?.length) chars += JSON.stringify(message.toolCalls).length;
  }
  if (tools.length > 0) chars += JSON.stringify(tools).length;
  return chars;
}

/** The cost of a number of tokens at the given prices. */
export function costOf(prices: ModelPrices, inputTokens: number, outputTokens: number): number {
  return (inputTokens * prices.inputPerMTok + outputTokens * prices.outputPerMTok) / 1_000_000;
}

/** The estimate of one call: the prompt, the completion limit, and the most it may cost. */
export function estimateCall(
  instructions: string,
  request: { messages: readonly PlannerMessage[]; tools: readonly PlannerTool[] },
  maxOutputTokens: number,
  prices?: ModelPrices,
): PlannerEstimate {
  const inputTokens = Math.ceil(promptChars(instructions, request.messages, request.tools) / 4);
  const estimate: PlannerEstimate = { inputTokens, maxOutputTokens };
  if (prices) estimate.maxCostUsd = costOf(prices, inputTokens, maxOutputTokens);
  return estimate;
}
