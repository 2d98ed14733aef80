/**
 * The ledger's vocabulary: every status a tool call's row can have. One list feeds the row's
 * type, the settled and failed sets the runtime reasons with, and the API's `status`.
 */

/** Every status of a tool call, in the order a call can reach them. */
export const TOOL_CALL_STATUSES = [
  /** Committed before the effect: a row still `started` after a restart was interrupted. */
  'started',
  /** The effect may or may not have happened (interrupted, timed out, aborted, threw): resolved by effect class. */
  'unknown',
  'succeeded',
  'failed',
  /** Arguments the tool's schema refused. */
  'invalid',
  /** A tool the runtime does not have. */
  'not_found',
  /** Refused by policy. */
  'denied',
  /** Refused by a reviewer. */
  'rejected',
  /** Not run: its step's approval was rejected. */
  'skipped',
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** Settled statuses: the call will not run (again) — all but the two still open. */
export const SETTLED_TOOL_CALL_STATUSES: ReadonlySet<ToolCallStatus> = new Set(
  TOOL_CALL_STATUSES.filter((status) => status !== 'started' && status !== 'unknown'),
);

/** Settled statuses in which the call did not achieve anything (for loop detection). */
export const FAILED_TOOL_CALL_STATUSES: ReadonlySet<ToolCallStatus> = new Set<ToolCallStatus>([
  'failed',
  'invalid',
  'not_found',
  'denied',
]);
