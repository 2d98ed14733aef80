/** The planner boundary: what a planner is given (the built context) and what it decides. */
import { z } from 'zod';
import type { Usage } from '../../machines/types.js';
import type { RunUserContext } from '../tools/define-tool.js';

/** One message of the context the planner sees. */
export type PlannerMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: { id: string; tool: string; args: unknown }[] }
  | { role: 'tool'; toolCallId: string; tool: string; content: string };

/** A tool as the planner sees it: name, description, JSON Schema of its input. */
export interface PlannerTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The planner's input: the built context of one step. */
export interface PlannerRequest {
  runId: string;
  stepIndex: number;
  input: string;
  /** The session's committed history, then this run's messages and tool observations. */
  messages: PlannerMessage[];
  tools: PlannerTool[];
  context: RunUserContext;
  signal: AbortSignal;
}

export const decisionSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('tool_calls'),
    calls: z.array(z.object({ tool: z.string(), args: z.unknown() })).min(1),
    text: z.string().optional(),
  }),
  z.object({ type: z.literal('final'), answer: z.string() }),
]);

/** A planner decision: tool calls to make, or a final answer. */
export type Decision = z.infer<typeof decisionSchema>;

/** What a planner returns for one step. */
export interface PlannerResponse {
  decision: Decision;
  usage: Usage;
}

/** Anything that decides the next step of a run. */
export interface Planner {
  next(request: PlannerRequest): Promise<PlannerResponse>;
}
