/**
 * Runs one tool call: timeout and abort, bounded retries of transient unavailability,
 * output validation, and normalization; an output larger than the tool's limit becomes an
 * artifact (sha256) with a truncated preview.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULTS } from '../defaults.js';
import { BatonError, createFailure } from '../failure.js';
import {
  ToolFailedError,
  ToolDetached,
  ToolInputRequired,
  ToolOutcomeUnknownError,
  ToolRateLimitedError,
  ToolUnavailableError,
  type AnyTool,
  type PollContext,
  type Reconciliation,
  type ToolContext,
  type ToolProgress,
  type ToolQuestion,
} from './define-tool.js';
import { OutputWithImages } from './tool-images.js';
import { toErrorResult, type ToolResult } from './tool-result.js';

/** An output too large for the ledger, to be stored once by content hash. */
export interface ArtifactBlob {
  sha256: string;
  size: number;
  mediaType: string;
  content: Buffer;
}

/**
 * Why a call's outcome is unknown: it timed out or was aborted (JavaScript cannot stop a promise,
 * so its effect may still happen), or it threw something other than the tool's own
 * `ToolFailedError` / `ToolUnavailableError`, which are the only ways to say "this did not take
 * effect".
 */
export type UnknownCause = 'timed_out' | 'aborted' | 'threw';

/** The outcome of running a tool: its normalized result and, maybe, an artifact to store. */
export interface ToolRun {
  result: ToolResult;
  artifact?: ArtifactBlob;
  /** The images the tool returned, to be stored as artifacts (the result names them). */
  images?: ArtifactBlob[];
  /** Set when the call may or may not have taken effect. */
  unknown?: UnknownCause;
  /** Set when the tool stopped to ask a person (`ToolInputRequired`): it did nothing yet. */
  inputRequired?: { question: ToolQuestion; state: unknown };
  /** Set when the tool let go of the call while its work goes on elsewhere (`ctx.detach`). */
  detached?: { pollAfterMs: number | undefined };
}

class Timeout extends Error {}

/**
 * Calls `fn` with a signal that aborts on the parent's abort or after `timeoutMs`. The time `fn`
 * spends inside `hold` (waiting for a person) does not count.
 */
async function withTimeout<T>(
  timeoutMs: number,
  parent: AbortSignal,
  fn: (signal: AbortSignal, hold: <R>(waiting: Promise<R>) => Promise<R>) => Promise<T> | T,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let left = timeoutMs;
  let armedAt = 0;
  let held = 0;
  let settled = false;
  let fire: () => void = () => undefined;
  const arm = () => {
    armedAt = Date.now();
    timer = setTimeout(fire, left);
  };
  const hold = async <R>(waiting: Promise<R>): Promise<R> => {
    if (held++ === 0) {
      clearTimeout(timer);
      left = Math.max(0, left - (Date.now() - armedAt));
    }
    try {
      return await waiting;
    } finally {
      if (--held === 0 && !settled) arm();
    }
  };
  try {
    return await Promise.race([
      Promise.resolve().then(() => fn(controller.signal, hold)),
      new Promise<never>((_, reject) => {
        fire = () => {
          controller.abort(new Timeout());
          reject(new Timeout());
        };
        arm();
      }),
    ]);
  } finally {
    settled = true;
    clearTimeout(timer);
    parent.removeEventListener('abort', onAbort);
  }
}

/** Images as artifacts, each stored once by its hash. */
function toImageBlobs(images: OutputWithImages['images']): ArtifactBlob[] {
  return images.map((image) => ({
    sha256: createHash('sha256').update(image.data).digest('hex'),
    size: image.data.length,
    mediaType: image.mediaType,
    content: image.data,
  }));
}

/**
 * Normalizes an output: validates it, moves it to an artifact when it is too large, and moves the
 * images that came with it (`OutputWithImages`) to artifacts of their own, named by the result.
 */
export function normalizeOutput(tool: AnyTool, output: unknown, durationMs: number): ToolRun {
  if (!(output instanceof OutputWithImages)) return normalizeValue(tool, output, durationMs);
  const run = normalizeValue(tool, output.output, durationMs);
  if (output.images.length === 0 || run.result.status !== 'ok') return run;
  const images = toImageBlobs(output.images);
  run.result.images = images.map(({ sha256, size, mediaType }) => ({ sha256, size, mediaType }));
  return { ...run, images };
}

function normalizeValue(tool: AnyTool, output: unknown, durationMs: number): ToolRun {
  if (tool.output) {
    const parsed = tool.output.safeParse(output);
    if (!parsed.success) {
      const failure = createFailure(
        'tool.failed',
        `Tool '${tool.name}' returned output that does not match its schema`,
        {
          details: { issues: parsed.error.issues },
        },
      );
      return { result: toErrorResult(failure, durationMs) };
    }
    output = parsed.data;
  }
  const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
  const bytes = Buffer.byteLength(text);
  if (bytes <= tool.maxOutputBytes) {
    return { result: { status: 'ok', content: output ?? null, durationMs, truncated: false, retryable: false } };
  }
  const content = Buffer.from(text);
  const sha256 = createHash('sha256').update(content).digest('hex');
  const preview = content.subarray(0, Math.min(DEFAULTS.previewBytes, tool.maxOutputBytes)).toString('utf8');
  return {
    result: {
      status: 'ok',
      content: preview,
      durationMs,
      truncated: true,
      retryable: false,
      artifact: { sha256, size: bytes },
    },
    artifact: {
      sha256,
      size: bytes,
      mediaType: typeof output === 'string' ? 'text/plain' : 'application/json',
      content,
    },
  };
}

function toToolFailure(tool: AnyTool, error: unknown, signal: AbortSignal) {
  if (error instanceof Timeout) {
    return createFailure('tool.timed_out', `Tool '${tool.name}' timed out after ${tool.timeoutMs} ms`, {
      retryable: true,
    });
  }
  if (signal.aborted) return createFailure('tool.failed', `Tool '${tool.name}' was aborted`);
  if (error instanceof ToolUnavailableError) {
    return createFailure('tool.unavailable', `Tool '${tool.name}' is unavailable: ${error.message}`, {
      retryable: true,
    });
  }
  if (error instanceof ToolOutcomeUnknownError) {
    return createFailure('tool.outcome_unknown', `The outcome of tool '${tool.name}' is unknown: ${error.message}`);
  }
  const message = error instanceof Error ? error.message : String(error);
  return createFailure('tool.failed', `Tool '${tool.name}' failed: ${message}`, {
    retryable: error instanceof ToolFailedError ? error.retryable : false,
  });
}

function unknownCause(error: unknown, signal: AbortSignal): UnknownCause | undefined {
  if (error instanceof Timeout) return 'timed_out';
  if (signal.aborted) return 'aborted';
  if (error instanceof ToolFailedError || error instanceof ToolUnavailableError) return undefined;
  return 'threw';
}

/**
 * Runs a tool until `deadlineAt` (epoch ms; its own timeout from now by default); retries only
 * transient unavailability, and never an `unsafe` tool. A result whose outcome is unknown says
 * why in `unknown`.
 */
export async function runTool(
  tool: AnyTool,
  input: unknown,
  ctx: ToolContext,
  deadlineAt?: number,
  onRateLimited?: (retryAfterMs: number | undefined) => Promise<boolean>,
): Promise<ToolRun> {
  const retries = tool.effect === 'unsafe' ? 0 : DEFAULTS.toolUnavailableRetries;
  const started = performance.now();
  const deadline = deadlineAt ?? Date.now() + tool.timeoutMs;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const left = Math.max(0, deadline - Date.now());
      const output = await withTimeout(left, ctx.signal, (signal, hold) => {
        const ask = ctx.ask;
        return tool.execute(input, { ...ctx, signal, ...(ask ? { ask: (q: ToolQuestion) => hold(ask(q)) } : {}) });
      });
      return normalizeOutput(tool, output, Math.round(performance.now() - started));
    } catch (error) {
      if (error instanceof ToolInputRequired && !ctx.signal.aborted) {
        const failure = createFailure('tool.failed', error.message);
        const result = toErrorResult(failure, Math.round(performance.now() - started));
        return { result, inputRequired: { question: error.question, state: error.state } };
      }
      if (error instanceof ToolDetached && !ctx.signal.aborted && ctx.detach) {
        const failure = createFailure('tool.failed', error.message);
        return { result: toErrorResult(failure), detached: { pollAfterMs: error.pollAfterMs } };
      }
      // A 429 (`ToolRateLimitedError`): the caller backs the limit's keys off, and says whether to try again.
      if (error instanceof ToolRateLimitedError && onRateLimited && !ctx.signal.aborted) {
        if (await onRateLimited(error.retryAfterMs)) continue;
      }
      const failure = toToolFailure(tool, error, ctx.signal);
      if (failure.code === 'tool.unavailable' && attempt < retries && !ctx.signal.aborted) {
        await sleep(DEFAULTS.toolRetryBackoffMs * 2 ** attempt);
        continue;
      }
      const result = toErrorResult(failure, Math.round(performance.now() - started));
      const unknown = unknownCause(error, ctx.signal);
      return unknown ? { result, unknown } : { result };
    }
  }
}

/**
 * What one poll of a call's work elsewhere found: still going (also when it could not be reached,
 * or the poll itself took too long: the work is not lost for that), or ended, as a tool run ends.
 */
export type PollRun =
  | { running: true; pollAfterMs: number | undefined; progress: ToolProgress | undefined; unreachable: boolean }
  | ({ running: false } & ToolRun);

/** Polls a call's work elsewhere once (`pollHandle`), in at most `timeoutMs`. */
export async function pollTool(tool: AnyTool, handle: unknown, ctx: PollContext, timeoutMs: number): Promise<PollRun> {
  const started = performance.now();
  const unreachable = { running: true, pollAfterMs: undefined, progress: undefined, unreachable: true } as const;
  if (!tool.pollHandle) {
    const failure = createFailure(
      'tool.outcome_unknown',
      `The outcome of tool '${tool.name}' is unknown: it cannot follow the work its call left running elsewhere (no pollHandle)`,
    );
    return { running: false, result: toErrorResult(failure), unknown: 'threw' };
  }
  try {
    const poll = await withTimeout(timeoutMs, ctx.signal, (signal) => tool.pollHandle!(handle, { ...ctx, signal }));
    if (!poll.done)
      return { running: true, pollAfterMs: poll.pollAfterMs, progress: poll.progress, unreachable: false };
    return { running: false, ...normalizeOutput(tool, poll.output, Math.round(performance.now() - started)) };
  } catch (error) {
    if (error instanceof Timeout || error instanceof ToolUnavailableError) return unreachable;
    const failure = toToolFailure(tool, error, ctx.signal);
    const result = toErrorResult(failure, Math.round(performance.now() - started));
    return error instanceof ToolFailedError ? { running: false, result } : { running: false, result, unknown: 'threw' };
  }
}

/** Asks a reconcilable tool whether an interrupted call already took effect. */
export async function reconcileTool(tool: AnyTool, input: unknown, ctx: ToolContext): Promise<Reconciliation<unknown>> {
  if (!tool.reconcile) return { done: false };
  try {
    return await withTimeout(tool.timeoutMs, ctx.signal, (signal) => tool.reconcile!(input, { ...ctx, signal }));
  } catch (error) {
    if (!(error instanceof Timeout)) throw error;
    throw new BatonError(
      createFailure('tool.timed_out', `reconcile() of tool '${tool.name}' timed out after ${tool.timeoutMs} ms`),
    );
  }
}
