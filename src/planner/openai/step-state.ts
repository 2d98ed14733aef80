/** What one planning step has spent and done across its attempts, and the failures it ends with. */
import { BatonError, createFailure, type FailureCode } from '../../failure.js';
import type { PlannerMessage, PlannerResponse, PlannerTool } from '../types.js';
import { costOf, estimateTokens, promptChars, type ModelPrices } from './estimate.js';
import type { ModelOutput } from './model-output.js';

/** The running state of one step: the messages as they stand now, usage and the retries used. */
export interface StepState {
  messages: PlannerMessage[];
  usage: { inputTokens: number; outputTokens: number };
  attempts: number;
  retries: number;
  emptyRetried: boolean;
  compacted: boolean;
  contextNotes: string[];
}

/** A fresh state for a step that starts from these messages. */
export function createStepState(messages: PlannerMessage[]): StepState {
  return {
    messages,
    usage: { inputTokens: 0, outputTokens: 0 },
    attempts: 0,
    retries: 0,
    emptyRetried: false,
    compacted: false,
    contextNotes: [],
  };
}

/** Adds an attempt's usage; a server that reports none is charged by estimate, so budgets still apply. */
export function addUsage(
  state: StepState,
  output: ModelOutput,
  prompt: { instructions: string; tools: readonly PlannerTool[] },
): void {
  const usage = output.usage ?? {
    inputTokens: Math.ceil(promptChars(prompt.instructions, state.messages, prompt.tools) / 4),
    outputTokens: estimateTokens(output.content + output.toolCalls.map((c) => c.name + c.arguments).join('')),
  };
  state.usage.inputTokens += usage.inputTokens;
  state.usage.outputTokens += usage.outputTokens;
}

/** The step's usage so far, priced when prices are known. */
export function usageOf(state: StepState, prices: ModelPrices | undefined): PlannerResponse['usage'] {
  const { inputTokens, outputTokens } = state.usage;
  if (!prices) return { inputTokens, outputTokens };
  return { inputTokens, outputTokens, costUsd: costOf(prices, inputTokens, outputTokens) };
}

/** The error a step ends with; its details carry the usage and attempts, so budgets count what failed steps spent. */
export function stepFailure(
  state: StepState,
  planner: { model: string; prices?: ModelPrices | undefined },
  code: FailureCode,
  message: string,
  details: Record<string, unknown> = {},
): BatonError {
  return new BatonError(
    createFailure(code, message, {
      retryable: code === 'planner.unavailable',
      details: {
        model: planner.model,
        ...details,
        usage: usageOf(state, planner.prices),
        attempts: state.attempts,
        contextNotes: state.contextNotes,
      },
    }),
  );
}
