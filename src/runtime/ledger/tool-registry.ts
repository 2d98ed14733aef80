/**
 * The runtime's tools as others see them: the planner (name, description, JSON Schema) and
 * people (`runtime.tools()`, `GET /v1/tools`): what each runs as — effect class, risk, trust —
 * and, for a tool from an MCP server, where it comes from and how its annotations were mapped.
 */
import { z } from 'zod';
import type { PlannerTool } from '../../planner/types.js';
import type { AnyTool, Effect, Risk, ToolOrigin } from '../../tools/define-tool.js';

/** One tool of the runtime, as `runtime.tools()` lists it. */
export interface ToolInfo {
  name: string;
  version: string;
  description: string;
  effect: Effect;
  risk: Risk;
  /** False when the tool's output is outside content (the policy is stricter after it). */
  trustedOutput: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  /** The JSON Schema of its input, as the model is shown it. */
  parameters: Record<string, unknown>;
  /** Where it comes from when Baton did not declare it (an MCP server), else null. */
  origin: ToolOrigin | null;
}

/** The JSON Schema a model is shown for a tool's input: its own, or its zod input's. */
function parametersOf(tool: AnyTool): Record<string, unknown> {
  return (
    tool.parameters ?? (z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>)
  );
}

/** The tools as the planner is given them. */
export function plannerTools(tools: readonly AnyTool[]): PlannerTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, parameters: parametersOf(t) }));
}

/** The tools as `runtime.tools()` lists them, in the order they were given. */
export function describeTools(tools: readonly AnyTool[]): ToolInfo[] {
  return tools.map((t) => ({
    name: t.name,
    version: t.version,
    description: t.description,
    effect: t.effect,
    risk: t.risk,
    trustedOutput: t.trustedOutput,
    timeoutMs: t.timeoutMs,
    maxOutputBytes: t.maxOutputBytes,
    parameters: parametersOf(t),
    origin: t.origin ?? null,
  }));
}
