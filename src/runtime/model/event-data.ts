/**
 * The shapes inside event data: snake_case like everything else on the wire (docs/architecture.md §6), so an
 * event is the same object in the log, on an SSE stream and in `--json` output.
 */
import type { Compensation, ExtendedLimits, MachineLimits, Usage } from '../../../machines/types.js';
import type { Failure } from '../../failure.js';
import type { ToolProgress } from '../../tools/define-tool.js';

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

const EXTENDED_KEYS = [
  ['maxSteps', 'max_steps'],
  ['maxLlmCalls', 'max_llm_calls'],
  ['maxToolCalls', 'max_tool_calls'],
  ['maxTokens', 'max_tokens'],
  ['maxCostUsd', 'max_cost_usd'],
] as const;

/** Limits a person raised (only those given), as events and stored decisions carry them. */
export function toExtendedLimitsData(limits: ExtendedLimits): Record<string, number | null> {
  const data: Record<string, number | null> = {};
  for (const [key, wire] of EXTENDED_KEYS) if (limits[key] !== undefined) data[wire] = limits[key];
  return data;
}

/** The limits of a stored `extend` decision. */
export function fromExtendedLimitsData(data: Record<string, number | null> | undefined): ExtendedLimits {
  const limits: Record<string, number | null> = {};
  for (const [key, wire] of EXTENDED_KEYS) if (data && wire in data) limits[key] = data[wire] ?? null;
  return limits as ExtendedLimits;
}

/** A run's compensation as it is stored on the run and shown (`Run.compensation`): under way, or done with its report. */
export interface RunCompensation {
  reason: Compensation['reason'];
  /**
   * `compensating` while it runs; `done` once every candidate was looked at; `stopped` when the
   * run ended first (its deadline passed, or a second cancel): the ledger has what was undone.
   */
  status: 'compensating' | 'done' | 'stopped';
  compensated: { toolCallId: string; tool: string }[];
  failed: { toolCallId: string; tool: string; failure: Failure }[];
  notCompensated: { toolCallId: string; tool: string; reason: 'no_compensator' | 'outcome_unknown' }[];
}

/** The machine's compensation as the run shows it (`ended`: the run is terminal). */
export function toRunCompensation(c: Compensation, ended = false): RunCompensation {
  const report = c.report ?? { compensated: [], failed: [], notCompensated: [] };
  return { reason: c.reason, status: c.report ? 'done' : ended ? 'stopped' : 'compensating', ...report };
}

/** A run's compensation on the wire (the run's JSON, the last `state` event): snake_case. */
export interface CompensationJson {
  reason: RunCompensation['reason'];
  status: RunCompensation['status'];
  compensated: { tool_call_id: string; tool: string }[];
  failed: { tool_call_id: string; tool: string; failure: Failure }[];
  not_compensated: { tool_call_id: string; tool: string; reason: 'no_compensator' | 'outcome_unknown' }[];
}

/** A run's compensation in event data and the run's JSON. */
export function toCompensationData(c: RunCompensation): CompensationJson {
  return {
    reason: c.reason,
    status: c.status,
    compensated: c.compensated.map((x) => ({ tool_call_id: x.toolCallId, tool: x.tool })),
    failed: c.failed.map((x) => ({ tool_call_id: x.toolCallId, tool: x.tool, failure: x.failure })),
    not_compensated: c.notCompensated.map((x) => ({ tool_call_id: x.toolCallId, tool: x.tool, reason: x.reason })),
  };
}

/** How far a call has come, as a `progress` event carries it (whoever reports it: the call, or a poll of its work). */
export function toProgressData(callId: string, tool: string, update: ToolProgress): Record<string, unknown> {
  return {
    tool_call_id: callId,
    tool,
    progress: typeof update.progress === 'number' ? update.progress : null,
    total: typeof update.total === 'number' ? update.total : null,
    message: typeof update.message === 'string' ? update.message.slice(0, 2000) : null,
  };
}
