/** A tool call's outcome, normalized: what the ledger stores and the model is shown. */
import type { Failure } from '../failure.js';
import type { ToolImageRef } from './tool-images.js';

/** The normalized result of one tool call. */
export interface ToolResult {
  status: 'ok' | 'error';
  /** The output (or its preview when truncated), or the failure message. */
  content: unknown;
  durationMs: number;
  truncated: boolean;
  retryable: boolean;
  failure?: Failure;
  /** Set when the full output was stored as an artifact. */
  artifact?: { sha256: string; size: number };
  /** Images the tool returned besides its output, each stored as an artifact. */
  images?: ToolImageRef[];
  /** Set when a person gave this result: they recorded an interrupted call as done, answered a question, or responded as the tool. */
  recordedBy?: string;
  /** How a person gave it: the answer to a question, or an output in place of running the call. */
  given?: 'answer' | 'response';
}

/** A failed result; nothing ran or the tool failed. */
export function toErrorResult(failure: Failure, durationMs = 0): ToolResult {
  return {
    status: 'error',
    content: failure.message,
    durationMs,
    truncated: false,
    retryable: failure.retryable ?? false,
    failure,
  };
}
