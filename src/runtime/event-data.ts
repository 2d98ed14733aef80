/**
 * The shapes inside event data: snake_case like everything else on the wire (DESIGN §7), so an
 * event is the same object in the log, on an SSE stream and in `--json` output.
 */
import type { MachineLimits, Usage } from '../../machines/types.js';

/** A planner call's usage, as a `step` event carries it. */
export function toUsageData(usage: Usage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    ...(usage.costUsd === undefined ? {} : { cost_usd: usage.costUsd }),
  };
}

/** A run's limits, as its `run.created` event carries them. */
export function toLimitsData(limits: MachineLimits): Record<string, number | null> {
  return {
    max_steps: limits.maxSteps,
    max_llm_calls: limits.maxLlmCalls,
    max_tool_calls: limits.maxToolCalls,
    max_tokens: limits.maxTokens,
    max_cost_usd: limits.maxCostUsd,
    loop_threshold: limits.loopThreshold,
  };
}
