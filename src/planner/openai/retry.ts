/** Backoff between retries of transient failures, honouring the server's `Retry-After`. */
import { BatonError, createFailure } from '../../failure.js';

/** Bounds of the retries of one step. */
export interface RetryOptions {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The wait a server asked for in `retry-after-ms` or `retry-after` (seconds or an HTTP date), if any. */
export function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The wait before retry `retry` (0-based): the server's wish if it said, else exponential backoff with jitter; capped. */
export function retryDelay(options: RetryOptions, retry: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, options.maxDelayMs);
  const backoff = options.baseDelayMs * 2 ** retry;
  // Jitter spreads the retries of many runs that failed together.
  return Math.min(backoff * (0.75 + Math.random() * 0.25), options.maxDelayMs);
}

/** The error a planner throws when its request was aborted: the signal's own BatonError, or `run.cancelled`. */
export function abortError(signal: AbortSignal): BatonError {
  if (signal.reason instanceof BatonError) return signal.reason;
  return new BatonError(createFailure('run.cancelled', 'The planner request was aborted'));
}

/** Waits `ms`, or rejects as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
