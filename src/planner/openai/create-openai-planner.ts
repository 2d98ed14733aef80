/** A planner that asks an OpenAI-compatible model through the official `openai` client. */
import type OpenAI from 'openai';
import type { FailureCode } from '../../failure.js';
import { memoryPrompt, type Planner, type PlannerRequest, type PlannerResponse } from '../types.js';
import { callModel } from './call-model.js';
import type { RequestError } from './classify-error.js';
import { compactMessages } from './compact-messages.js';
import { createClient } from './create-client.js';
import { EMPTY_REPLY_NOTE, OPENAI_PLANNER_DEFAULTS as D } from './defaults.js';
import { estimateCall, promptChars, type ModelPrices } from './estimate.js';
import { toRequestBody, type CompletionLimitField } from './request-body.js';
import { abortError, retryDelay, sleep, type RetryOptions } from './retry.js';
import { addUsage, createStepState, stepFailure, usageOf, type StepState } from './step-state.js';
import { toDecision } from './to-decision.js';
import { createToolNames } from './tool-names.js';

/** How to reach the model and how to ask it. */
export interface OpenAIPlannerOptions {
  model: string;
  /** The system message of every request. */
  instructions: string;
  /** A ready client (Azure, a proxy, custom fetch); otherwise one is made from the options below. */
  client?: OpenAI;
  /** Defaults to `OPENAI_BASE_URL`, then OpenAI's API. */
  baseURL?: string;
  /** Defaults to `OPENAI_API_KEY`; a placeholder when only a base URL is configured. */
  apiKey?: string;
  maxCompletionTokens?: number;
  completionLimitField?: CompletionLimitField;
  temperature?: number;
  /** Prices per million tokens: with them, usage carries `costUsd` and estimates `maxCostUsd`. */
  prices?: ModelPrices;
  retry?: Partial<RetryOptions>;
  /** Idle limit of one request: until the response starts, and between two stream chunks. */
  timeoutMs?: number;
  /** Stream the reply (and its drafts); default true. */
  stream?: boolean;
  /**
   * The model accepts images: the images tool calls return (an MCP tool's `image` content) are
   * sent to it as `image_url` parts of a user message after the tool results. Default false: many
   * OpenAI-compatible servers run text-only models, which refuse image parts; the model then
   * sees each image named (media type, size, artifact) in the tool result's text.
   */
  images?: boolean;
}

/**
 * Creates a planner backed by Chat Completions with tools. Transient failures are retried with
 * backoff, an empty reply once with a note, a context-length error once after compaction;
 * everything else becomes a classified `BatonError`.
 * @example
 * const planner = createOpenAIPlanner({ model: 'gpt-4.1-mini', instructions: 'You are a careful assistant.' });
 */
export function createOpenAIPlanner(
  options: OpenAIPlannerOptions,
): Planner & { readonly model: string; readonly provider: string; readonly images: boolean } {
  const { model, instructions, prices } = options;
  const stream = options.stream ?? true;
  const timeoutMs = options.timeoutMs ?? D.timeoutMs;
  const retry: RetryOptions = {
    maxRetries: options.retry?.maxRetries ?? D.maxRetries,
    baseDelayMs: options.retry?.baseDelayMs ?? D.baseDelayMs,
    maxDelayMs: options.retry?.maxDelayMs ?? D.maxDelayMs,
  };
  const settings = {
    model,
    instructions,
    maxCompletionTokens: options.maxCompletionTokens ?? D.maxCompletionTokens,
    completionLimitField: options.completionLimitField ?? 'max_completion_tokens',
    temperature: options.temperature,
    images: options.images ?? D.images,
  };
  const client = createClient({ client: options.client, baseURL: options.baseURL, apiKey: options.apiKey, timeoutMs });
  const fail = (state: StepState, code: FailureCode, message: string, details?: Record<string, unknown>) =>
    stepFailure(state, { model, prices }, code, message, details);

  /** Decides what a failed request leads to: another attempt (after any wait), or the step's failure. */
  async function recover(state: StepState, request: PlannerRequest, error: RequestError, step: string): Promise<void> {
    switch (error.type) {
      case 'aborted':
        throw abortError(request.signal);
      case 'transient': {
        if (error.status === 429) await request.onRateLimited?.(error.retryAfterMs);
        if (state.retries < retry.maxRetries) {
          await sleep(retryDelay(retry, state.retries, error.retryAfterMs), request.signal);
          state.retries += 1;
          return;
        }
        const message = `Model '${model}' is unavailable after ${state.attempts} attempts at ${step}: ${error.message}`;
        throw fail(state, 'planner.unavailable', message, { status: error.status });
      }
      case 'context_length': {
        // Compacted once per step: a second context error means compaction was not enough.
        const compaction = state.compacted ? undefined : compactMessages(instructions, state.messages, request.tools);
        state.compacted = true;
        if (compaction && compaction.compacted > 0) {
          state.messages = compaction.messages;
          state.contextNotes.push(
            `Context length exceeded: replaced the ${compaction.compacted} oldest tool outputs with notes ` +
              `(~${compaction.beforeTokens} → ~${compaction.afterTokens} tokens) and retried.`,
          );
          return;
        }
        const message = `The context of ${step} does not fit model '${model}': ${error.message}`;
        throw fail(state, 'planner.context_too_large', message);
      }
      case 'failed': {
        const message = `Model API answered ${error.status ?? 'an error'} at ${step}: ${error.message}`;
        throw fail(state, 'planner.failed', message, { status: error.status, code: error.code });
      }
    }
  }

  async function next(request: PlannerRequest): Promise<PlannerResponse> {
    const names = createToolNames(request.tools);
    const step = `step ${request.stepIndex} of run '${request.runId}'`;
    const state = createStepState(request.messages);
    // An agent with memory is shown it after its instructions, as of the version the step reads.
    const stepSettings = request.memory
      ? { ...settings, instructions: settings.instructions + memoryPrompt(request.memory) }
      : settings;
    for (;;) {
      state.attempts += 1;
      const body = toRequestBody(stepSettings, request.runId, state.messages, request.tools, names);
      const { signal } = request;
      // Drafts say which attempt they belong to, so a reader can drop a broken attempt's text.
      const attempt = state.attempts;
      const onDraft = request.onDraft && ((text: string) => request.onDraft!(text, { attempt }));
      const result = await callModel({ client, body, stream, signal, timeoutMs, onDraft });
      if (!result.ok) {
        await recover(state, request, result.error, step);
        continue;
      }
      addUsage(state, result.output, { instructions: stepSettings.instructions, tools: request.tools });
      const outcome = toDecision(result.output, names);
      if (outcome.type === 'decision') {
        const response: PlannerResponse = { decision: outcome.decision, usage: usageOf(state, prices) };
        response.attempts = state.attempts;
        if (state.contextNotes.length > 0) response.contextNotes = state.contextNotes;
        return response;
      }
      if (outcome.type === 'refused') {
        const message = `Model '${model}' refused at ${step}: ${outcome.refusal}`;
        throw fail(state, 'planner.refused', message, { refusal: outcome.refusal });
      }
      if (state.emptyRetried) {
        // Some servers (LM Studio) answer a prompt that overflows the context with an empty
        // stream instead of an error: say so, since it is the likely cause a user can act on.
        const tokens = Math.ceil(promptChars(instructions, state.messages, request.tools) / 4);
        const message =
          `Model '${model}' replied with nothing twice at ${step}; the likely cause is a prompt of ` +
          `~${tokens} tokens that does not fit the model's context (some servers answer so instead of with an error)`;
        throw fail(state, 'planner.empty_response', message);
      }
      state.emptyRetried = true;
      state.messages = [...state.messages, { role: 'user', content: EMPTY_REPLY_NOTE }];
    }
  }

  return {
    model,
    provider: 'openai',
    images: settings.images,
    next,
    estimate: (request) => estimateCall(instructions, request, settings.maxCompletionTokens, prices),
  };
}
