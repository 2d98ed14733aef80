/**
 * Failures are values: one closed set of codes, each with a kind that says who it is for.
 * They are plain JSON so they can be persisted, streamed and fed to the machine.
 */
import { z } from 'zod';
import { DEFAULTS } from './defaults.js';

/** Who a failure is addressed to, and how HTTP maps it. */
export const FAILURE_KINDS = ['user', 'model', 'tool', 'policy', 'system'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** Every failure code Baton produces, with its kind. */
export const FAILURE_CODES = {
  'input.invalid': 'user',
  'run.not_found': 'user',
  'run.invalid_transition': 'user',
  'run.cancelled': 'user',
  'session.busy': 'user',
  'schedule.not_found': 'user',
  // A schedule id already taken by another definition.
  'schedule.conflict': 'user',
  // Pausing or resuming a schedule that is done (a one-shot that fired).
  'schedule.invalid_transition': 'user',
  // A start over `limits.runsPerTenant`: the tenant has that many runs in flight already (HTTP 429).
  'run.tenant_limit': 'user',
  'idempotency.mismatch': 'user',
  'approval.not_found': 'user',
  'artifact.not_found': 'user',
  'approval.already_decided': 'user',
  // The run's machine (a variant) does not take this decision now, e.g. a second vote by the same approver.
  'approval.refused': 'user',
  // A decision after the wait's `expiresIn` ran out (the expiry's outcome stands).
  'approval.expired': 'user',
  // An edit of a call whose tool refuses edits (`allowEdit: false`).
  'approval.edit_not_allowed': 'user',
  // A decision that does not fit the wait (an answer to an approval, `extend` of a question).
  'approval.wrong_decision': 'user',
  // The run was made by another machine (or variant) than the runtime's.
  'run.machine_mismatch': 'user',
  // createRuntime({ machine }) was given a machine the runtime cannot drive.
  'machine.incompatible': 'user',
  // The run belongs to another agent than the runtime's: a process with that agent drives it.
  'run.agent_mismatch': 'user',
  // A fork would copy a call of a tool its agent no longer has (`details.tools` names them).
  'fork.tool_missing': 'user',
  // The application's copy of a peer dependency (zod) is one Baton cannot work with.
  'dependency.unsupported': 'user',
  'tool.invalid_arguments': 'model',
  'tool.not_found': 'model',
  'planner.empty_response': 'model',
  'planner.invalid_output': 'model',
  'planner.context_too_large': 'model',
  'planner.refused': 'model',
  'tool.failed': 'tool',
  'tool.timed_out': 'tool',
  'tool.unavailable': 'tool',
  'tool.outcome_unknown': 'tool',
  // The call was decided with another version of its tool than the one that would run it now.
  'tool.version_mismatch': 'tool',
  'policy.denied': 'policy',
  'planner.unavailable': 'system',
  'planner.failed': 'system',
  'run.budget_exceeded': 'system',
  'run.timeout': 'system',
  'run.loop_detected': 'system',
  'run.max_steps': 'system',
  'run.version_conflict': 'system',
  'run.closed': 'system',
  'store.checkpoint_failed': 'system',
  // The database refused a write (a full disk, an I/O error, a lost connection): nothing of it was committed.
  'store.write_failed': 'system',
  'store.open_failed': 'user',
  'store.not_baton': 'user',
  'store.corrupt': 'system',
  'store.corrupt_row': 'system',
  'internal.error': 'system',
  // createMcpTools could not connect to the MCP server or list its tools.
  'mcp.connect_failed': 'system',
  // Failures only the HTTP service produces (see src/server/http-error.ts for their statuses).
  'auth.required': 'user',
  'auth.forbidden': 'policy',
  'route.not_found': 'user',
  'request.too_large': 'user',
  // The client closed the connection before its request body was complete: nothing was done.
  'request.aborted': 'user',
  'rate.limited': 'user',
  'stream.limit': 'user',
  'stream.lagging': 'system',
  'server.closing': 'system',
  // The server could not listen where it was told: the port is taken, or the host is not this machine's.
  'server.listen_failed': 'user',
} as const satisfies Record<string, FailureKind>;
export type FailureCode = keyof typeof FAILURE_CODES;

/** A failure as it is stored, streamed and shown. */
export interface Failure {
  code: FailureCode;
  kind: FailureKind;
  message: string;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

export const failureSchema = z.object({
  code: z.enum(Object.keys(FAILURE_CODES) as [FailureCode, ...FailureCode[]]),
  kind: z.enum(FAILURE_KINDS),
  message: z.string(),
  retryable: z.boolean().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** Builds a failure whose kind follows from its code. */
export function createFailure(
  code: FailureCode,
  message: string,
  extra: { retryable?: boolean; details?: Record<string, unknown> } = {},
): Failure {
  return { code, kind: FAILURE_CODES[code], message, ...extra };
}

/** The one error Baton throws at its public boundary; it carries a `Failure`. */
export class BatonError extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.message);
    this.name = 'BatonError';
    this.failure = failure;
  }
  get code(): FailureCode {
    return this.failure.code;
  }
}

/** Throws a `BatonError` for the given code. */
export function fail(
  code: FailureCode,
  message: string,
  extra?: { retryable?: boolean; details?: Record<string, unknown> },
): never {
  throw new BatonError(createFailure(code, message, extra));
}

/** True when a value already is a failure. */
export function isFailure(value: unknown): value is Failure {
  return failureSchema.safeParse(value).success;
}

/** Converts anything caught at a boundary into a failure. */
export function toFailure(error: unknown, fallback: FailureCode = 'internal.error'): Failure {
  if (error instanceof BatonError) return error.failure;
  if (isFailure(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return createFailure(fallback, message);
}

/** An id as a message names it: in single quotes, cut to `DEFAULTS.messageIdChars` with `…` when longer. */
export function quoteId(id: string): string {
  const max = DEFAULTS.messageIdChars;
  return `'${id.length > max ? `${id.slice(0, max - 1)}…` : id}'`;
}

/** An expected outcome: a value or a failure, never a throw. */
export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure };
