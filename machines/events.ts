/** The run machine's events as a zod schema, so events from outside are checked before they reach it. */
import { z } from 'zod';
import { failureSchema } from '../src/failure.js';
import { BUDGETS, RISKS, WAIT_REASONS, type RunEvent } from './types.js';

// Failures are declared once, with their closed set of codes.
const failure = failureSchema;
const usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative().optional(),
});
const count = z.number().int().nonnegative();

/** Every event the run machine accepts, with its payload. */
export const runEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start') }),
  z.object({
    type: z.literal('plan_ready'),
    stepIndex: count,
    usage,
    final: z.boolean(),
    given: z.boolean().optional(),
  }),
  z.object({ type: z.literal('plan_error'), failure }),
  z.object({
    type: z.literal('next_step'),
    toolCalls: count,
    loopSignature: z.string().nullable(),
    handoffStack: z
      .array(
        z.object({
          agent: z.string(),
          step: count,
          callId: z.string(),
          tools: z.array(z.string()),
          instructions: z.string().nullable(),
        }),
      )
      .optional(),
  }),
  z.object({ type: z.literal('done') }),
  z.object({
    type: z.literal('need_approval'),
    approvalId: z.string(),
    reason: z.enum(WAIT_REASONS),
    toolCalls: count,
    risk: z.enum(RISKS).nullable().optional(),
  }),
  z.object({ type: z.literal('approved'), approvalId: z.string(), by: z.string().optional() }),
  z.object({
    type: z.literal('rejected'),
    approvalId: z.string(),
    terminate: z.boolean(),
    by: z.string().optional(),
    compensate: z.boolean().optional(),
  }),
  z.object({ type: z.literal('need_input'), approvalId: z.string(), toolCalls: count }),
  z.object({ type: z.literal('answered'), approvalId: z.string(), by: z.string().optional() }),
  z.object({ type: z.literal('edited'), approvalId: z.string(), by: z.string().optional() }),
  z.object({ type: z.literal('responded'), approvalId: z.string(), by: z.string().optional() }),
  z.object({
    type: z.literal('extended'),
    approvalId: z.string(),
    by: z.string().optional(),
    limits: z
      .object({
        maxSteps: count.optional(),
        maxLlmCalls: count.nullable().optional(),
        maxToolCalls: count.nullable().optional(),
        maxTokens: count.nullable().optional(),
        maxCostUsd: z.number().nonnegative().nullable().optional(),
      })
      .strict(),
    deadlineAt: z.number().nullable().optional(),
  }),
  z.object({ type: z.literal('expired'), approvalId: z.string(), outcome: z.enum(['reject', 'end']) }),
  z.object({
    type: z.literal('child_ended'),
    approvalId: z.string(),
    usage: z.object({ llmCalls: count, toolCalls: count, tokens: count, costUsd: z.number().nonnegative() }).strict(),
  }),
  z.object({ type: z.literal('task_ended'), approvalId: z.string() }),
  z.object({ type: z.literal('exec_error'), failure }),
  z.object({ type: z.literal('cancel'), reason: z.string().optional(), compensate: z.boolean().optional() }),
  z.object({ type: z.literal('timeout') }),
  z.object({ type: z.literal('budget_exceeded'), budget: z.enum(BUDGETS), toolCalls: count.optional() }),
  z.object({
    type: z.literal('compensated'),
    report: z.object({
      compensated: z.array(z.object({ toolCallId: z.string(), tool: z.string() })),
      failed: z.array(z.object({ toolCallId: z.string(), tool: z.string(), failure })),
      notCompensated: z.array(
        z.object({ toolCallId: z.string(), tool: z.string(), reason: z.enum(['no_compensator', 'outcome_unknown']) }),
      ),
    }),
  }),
  z.object({ type: z.literal('pause'), reason: z.string().max(2000).optional(), by: z.string().max(200).optional() }),
  z.object({ type: z.literal('resumed'), approvalId: z.string(), by: z.string().optional() }),
]) as unknown as z.ZodType<RunEvent>;
