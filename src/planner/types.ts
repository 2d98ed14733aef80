/** The planner boundary: what a planner is given (the built context) and what it decides. */
import { z } from 'zod';
import type { Usage } from '../../machines/types.js';
import type { RunUserContext } from '../tools/define-tool.js';

/** An image a tool call returned (stored as an artifact), for a model that accepts images. */
export interface PlannerImage {
  sha256: string;
  /** e.g. `image/png`. */
  mediaType: string;
  /** The bytes, base64: given only to a planner that says it accepts images (`images: true`). */
  data?: string;
}

/** One message of the context the planner sees. */
export type PlannerMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: { id: string; tool: string; args: unknown }[] }
  | { role: 'tool'; toolCallId: string; tool: string; content: string; images?: PlannerImage[] };

/** A tool as the planner sees it: name, description, JSON Schema of its input. */
export interface PlannerTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * The memory a planner is shown at a step (its agent has memory tools): the version it read, and
 * the entries of each scope it may use (the first 100 of each; `memory.read` reads any).
 */
export interface PlannerMemory {
  version: number;
  session?: Record<string, unknown>;
  tenant?: Record<string, unknown>;
}

/** The memory as a system prompt's section, for planners that talk to a model. */
export function memoryPrompt(memory: PlannerMemory): string {
  const parts = [`\n\nMemory (version ${memory.version}; change it with memory.write):`];
  if (memory.session) parts.push(`- this conversation: ${JSON.stringify(memory.session)}`);
  if (memory.tenant) parts.push(`- shared by the tenant: ${JSON.stringify(memory.tenant)}`);
  return parts.join('\n');
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
  /** Aborted on cancel, timeout and shutdown: abort the HTTP request with it. */
  signal: AbortSignal;
  /** The agent that plans this step: the run's own, or the one its conversation was handed to. */
  agent?: string;
  /** The run's memory as of the version this step reads (absent for an agent without memory tools). */
  memory?: PlannerMemory;
  /** Streams model text as it is generated: delivered live as `draft` events, never committed as an answer. */
  onDraft?: (text: string, info?: { attempt: number }) => void;
  /**
   * Tells the runtime the model API refused a request for its rate (a 429), with its retry hint
   * if it gave one, before the planner waits and tries again: with planner limits
   * (`createRuntime({ limits: { planner } })`) the limit's keys back off for every runtime.
   */
  onRateLimited?: (retryAfterMs?: number) => Promise<void>;
}

/** A planner's estimate of its next call, checked against the run's budgets before the call is made. */
export interface PlannerEstimate {
  /** Tokens of the prompt (messages and tool schemas), estimated. */
  inputTokens: number;
  /** The most the completion may use (the request's completion limit). */
  maxOutputTokens: number;
  /** The cost of the call if it used all of that, when the planner knows its prices. */
  maxCostUsd?: number;
}

const toolCallsDecision = z.object({
  type: z.literal('tool_calls'),
  calls: z
    .array(
      z.object({
        tool: z.string(),
        args: z.unknown(),
        /** Set when the model's arguments were not valid JSON: the model is shown this error. */
        argsError: z.string().optional(),
      }),
    )
    .min(1),
  text: z.string().optional(),
});
const finalDecision = z.object({ type: z.literal('final'), answer: z.string() });

/** A decision as it is journaled: tool calls to make, or a final answer. */
export const decisionSchema = z.discriminatedUnion('type', [toolCallsDecision, finalDecision]);

/** A planner decision as journaled: tool calls to make, or a final answer. */
export type Decision = z.infer<typeof decisionSchema>;

/**
 * What a planner may return: a journaled decision, or a question for a person (`ask`, for
 * scripted planners; a model calls the `human.ask` tool), journaled as that tool's call so the
 * ledger and the model see it like any other.
 */
export const plannerDecisionSchema = z.discriminatedUnion('type', [
  toolCallsDecision,
  finalDecision,
  z.object({
    type: z.literal('ask'),
    question: z.string().min(1),
    choices: z.array(z.string()).min(1).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    text: z.string().optional(),
  }),
]);
export type PlannerDecision = z.infer<typeof plannerDecisionSchema>;

/** What a planner returns for one step. */
export interface PlannerResponse {
  decision: PlannerDecision;
  /** Tokens (and cost, when the planner knows its prices) of this step, all attempts included. */
  usage: Usage;
  /** What the planner itself did to the context, e.g. compacting it after a context-length error. */
  contextNotes?: string[];
  /** Requests made for this step (retries included). */
  attempts?: number;
}

/** Anything that decides the next step of a run. */
export interface Planner {
  /** The model it asks, for traces (`gen_ai.request.model`). */
  model?: string;
  /** Whose API it calls, for traces (`gen_ai.provider.name`, e.g. `openai`). */
  provider?: string;
  next(request: PlannerRequest): Promise<PlannerResponse>;
  /** The cost of the next call, so budgets stop a run before a call that would exceed them. */
  estimate?(request: Omit<PlannerRequest, 'signal' | 'onDraft'>): PlannerEstimate;
  /**
   * True when asking again costs nothing (a scripted planner): its answer may then commit with
   * the transition it causes. Otherwise the answer is durable before it is acted on: with the
   * step's first write that must be durable (a call's `started` row before its effect, a wait,
   * the run's end), or on its own for a step of `read` calls only. A run restored after a crash
   * never asks the model again for a step any of whose effects may have begun; a crash between
   * the answer and that commit (nothing done with it yet) asks again.
   */
  cheap?: boolean;
  /**
   * True when the model accepts images: the images tool calls returned are then given to it
   * (`images` of a tool message, with their bytes). Otherwise it sees them named in the text.
   */
  images?: boolean;
}
