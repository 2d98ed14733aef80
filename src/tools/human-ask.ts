/**
 * `human.ask`: the tool a model calls to ask a person a question instead of acting. The runtime
 * never runs it: a call of it makes the run wait for an answer (reason `input`), and the answer,
 * checked against the question's JSON Schema, becomes the call's result. A scripted planner asks
 * with a decision `{ type: 'ask', … }`, journaled as a call of this tool.
 */
import { z } from 'zod';
import { createFailure, fail, type Failure } from '../failure.js';
import type { WaitExpiryOptions } from '../../machines/types.js';
import { defineTool, type AnyTool } from './define-tool.js';

/** The name of the built-in question tool. */
export const HUMAN_ASK = 'human.ask';

/** What the model gives when it asks. */
export const humanAskInput = z
  .object({
    question: z.string().min(1).max(4000).describe('The question, as the person will read it'),
    choices: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(50)
      .optional()
      .describe('The answers to choose from, when the person must pick one'),
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('A JSON Schema the answer must satisfy (e.g. {"type":"number"}); without it the answer is text'),
  })
  .strict();
export type HumanAskInput = z.infer<typeof humanAskInput>;

/** Options of `askHuman()`. */
export interface AskHumanOptions extends WaitExpiryOptions {
  /** What the model is told the tool is for. */
  description?: string;
  /** The role that may answer (default `approve`). */
  role?: string;
}

/**
 * The `human.ask` tool, for an agent's tools: the model may then ask a person a question (with
 * optional choices and a JSON Schema for the answer) and goes on with the answer.
 * @example defineAgent({ name: 'support', tools: [lookup, askHuman({ expiresIn: 3_600_000 })], planner })
 */
export function askHuman(options: AskHumanOptions = {}): AnyTool {
  const tool = defineTool({
    name: HUMAN_ASK,
    description:
      options.description ??
      'Ask a person a question when you need information or a choice only they can give. The run waits for the answer, which is this call’s result.',
    input: humanAskInput,
    effect: 'read',
    risk: 'low',
    allowEdit: false,
    ...(options.expiresIn !== undefined ? { expiresIn: options.expiresIn } : {}),
    ...(options.onExpire !== undefined ? { onExpire: options.onExpire } : {}),
    execute: () => fail('internal.error', `'${HUMAN_ASK}' is answered by a person, never run`),
  });
  return Object.assign(tool, { askRole: options.role ?? 'approve' });
}

/** The role that may answer a question asked through `tool` (`approve` unless `askHuman({ role })` said). */
export function askRoleOf(tool: AnyTool | undefined): string {
  return (tool as (AnyTool & { askRole?: string }) | undefined)?.askRole ?? 'approve';
}

/** The schema an answer is checked with: the question's JSON Schema, its choices, or any text. */
export function answerSchemaOf(request: Pick<HumanAskInput, 'choices' | 'schema'>): z.ZodType {
  if (request.schema) return z.fromJSONSchema(request.schema as never);
  if (request.choices) return z.enum(request.choices as [string, ...string[]]);
  return z.string().min(1);
}

/** Why a question's JSON Schema cannot check answers, or null when it can. */
export function unusableSchema(request: Pick<HumanAskInput, 'choices' | 'schema'>): Failure | null {
  try {
    answerSchemaOf(request);
    return null;
  } catch (error) {
    return createFailure(
      'tool.invalid_arguments',
      `The question's answer schema cannot be used: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
