/** Classifies what went wrong with one request, so the planner knows whether and how to retry. */
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { parseRetryAfter } from './retry.js';

/** A failed request, by what the planner does about it. */
export type RequestError =
  | { type: 'aborted' }
  | { type: 'transient'; message: string; status?: number; retryAfterMs?: number }
  | { type: 'context_length'; message: string }
  | { type: 'failed'; message: string; status?: number; code?: string };

// OpenAI: code `context_length_exceeded`; llama.cpp: `exceed_context_size_error`; vLLM,
// OpenRouter and others say so only in the message.
const CONTEXT_CODES = new Set(['context_length_exceeded', 'exceed_context_size_error', 'string_above_max_length']);
const CONTEXT_MESSAGE =
  /context[ _-]?(length|window|size)|maximum context|prompt is too long|too many (input |prompt )?tokens/i;

function apiMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : error.message;
}

/** True when an API error says the prompt did not fit the model's context. */
export function isContextLengthError(error: APIError): boolean {
  if (error.status !== undefined && (error.status < 400 || error.status >= 500)) return false;
  return (
    CONTEXT_CODES.has(error.code ?? '') ||
    CONTEXT_CODES.has(error.type ?? '') ||
    CONTEXT_MESSAGE.test(apiMessage(error))
  );
}

function classifyApiError(error: APIError): RequestError {
  const message = apiMessage(error);
  if (isContextLengthError(error)) return { type: 'context_length', message };
  const status = error.status;
  if (status === undefined) {
    // An `error` event inside a stream that had started: the server failed mid-answer.
    return { type: 'transient', message: `The stream reported an error: ${message}` };
  }
  const shouldRetry = error.headers?.get('x-should-retry');
  // A 429 for an exhausted quota will not pass by waiting.
  const retryable =
    shouldRetry === 'true' ||
    (shouldRetry !== 'false' &&
      error.code !== 'insufficient_quota' &&
      (status === 408 || status === 409 || status === 429 || status >= 500));
  if (!retryable) {
    const failed: RequestError = { type: 'failed', status, message };
    // Older vLLM sends the HTTP status as a number in `code`: only a string names an error.
    if (typeof error.code === 'string' && error.code) failed.code = error.code;
    return failed;
  }
  const transient: RequestError = { type: 'transient', status, message: `HTTP ${status}: ${message}` };
  const retryAfterMs = parseRetryAfter(error.headers);
  if (retryAfterMs !== undefined) transient.retryAfterMs = retryAfterMs;
  return transient;
}

/** Classifies an error thrown by a request that was not aborted by Baton. */
export function classifyError(error: unknown): RequestError {
  if (error instanceof APIUserAbortError) return { type: 'aborted' };
  if (error instanceof APIConnectionError) return { type: 'transient', message: error.message };
  if (error instanceof APIError) return classifyApiError(error);
  // Anything else was thrown while the body was read: the connection broke mid-way.
  const message = error instanceof Error ? error.message : String(error);
  return { type: 'transient', message: `The connection broke while reading the response: ${message}` };
}
