/**
 * How a unit of work fails, the same on both dialects: a conditional write that found the row
 * changed (another writer's version, an approval already decided), a unique index hit, or a
 * database that refused the write itself (a full disk, an I/O error, a lost connection).
 */
import { BatonError, createFailure, type Failure } from '../failure.js';

/** The failure of a unit whose conditional write found the row changed by someone else. */
export function versionConflict(runId: string): BatonError {
  return new BatonError(createFailure('run.version_conflict', `Run '${runId}' was written by another runtime`));
}

/** The failure of a unit whose run's lease is gone: another runtime claimed the run since (a later epoch). */
export function staleFence(fence: { runId: string; epoch: number }): BatonError {
  return new BatonError(
    createFailure(
      'run.version_conflict',
      `Run '${fence.runId}' was claimed by another worker (epoch ${fence.epoch} is stale)`,
      { details: { run_id: fence.runId, epoch: fence.epoch } },
    ),
  );
}

/** The failure of a unit that decided (or voted on) an approval no longer pending. */
export function approvalTaken(id: string): BatonError {
  return new BatonError(createFailure('approval.already_decided', `Approval '${id}' is already decided`));
}

/** The failure of a unit that would start a run over the tenant's cap of runs in flight. */
export function tenantLimit(tenant: string | null, cap: number): BatonError {
  const who = tenant === null ? 'Runs without a tenant' : `Tenant '${tenant}'`;
  return new BatonError(
    createFailure(
      'run.tenant_limit',
      `${who} already has ${cap} run${cap === 1 ? '' : 's'} in flight (limits.runsPerTenant)`,
      {
        retryable: true,
        details: { tenant_id: tenant, runs_per_tenant: cap },
      },
    ),
  );
}

/** True for a unique-index violation on either dialect (a taken idempotency key or session). */
export function isUniqueViolation(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return code === '23505' || code.startsWith('SQLITE_CONSTRAINT');
}

/**
 * SQLite result codes of a write the database could not make (the primary code; extended codes
 * such as `SQLITE_IOERR_WRITE` start with one of these). Constraint violations are not among them:
 * they are answers about the data, not failures to write.
 */
const SQLITE_WRITE_FAILURES = [
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_READONLY',
  'SQLITE_CANTOPEN',
  'SQLITE_NOMEM',
  'SQLITE_PROTOCOL',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
] as const;
/** PostgreSQL SQLSTATE classes of the same: 08 connection, 25006 a read-only database (a standby), 53 insufficient resources (53100 disk full), 57P operator intervention, 58 system (I/O) errors. */
const PG_WRITE_FAILURE_CLASSES = ['08', '25006', '53', '57P', '58'] as const;
/** Node's socket errors of a connection to PostgreSQL that is gone. */
const SOCKET_ERRORS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/** The cause a database gave for refusing a write (`SQLITE_FULL`, `53100`, `ECONNRESET`), or null for any other error. */
export function writeFailureCause(error: unknown): string | null {
  if (error instanceof BatonError || typeof error !== 'object' || error === null) return null;
  const code = String((error as { code?: unknown }).code ?? '');
  if (SQLITE_WRITE_FAILURES.some((prefix) => code === prefix || code.startsWith(`${prefix}_`))) return code;
  if (/^[0-9A-Z]{5}$/.test(code) && PG_WRITE_FAILURE_CLASSES.some((c) => code.startsWith(c))) return code;
  if (SOCKET_ERRORS.has(code)) return code;
  // pg reports a connection closed under a query with a plain Error.
  const message = error instanceof Error ? error.message : '';
  if (/^Connection terminated/.test(message)) return 'connection_terminated';
  return null;
}

/**
 * The error a failed write is reported as: `store.write_failed` naming the database's cause
 * (retryable: the same write may succeed once space or the connection is back); any other error
 * as it is.
 */
export function toWriteError(error: unknown): unknown {
  const cause = writeFailureCause(error);
  if (cause === null) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new BatonError(
    createFailure(
      'store.write_failed',
      `The database refused the write (${cause}: ${message}); nothing of it was committed`,
      {
        retryable: true,
        details: { cause },
      },
    ),
  );
}

/** True for a failure that a later attempt of the same write may not have (the database refused it). */
export function isWriteFailure(failure: { code: string }): boolean {
  return failure.code === 'store.write_failed';
}

/** Writes the database refused, since the last one it took: what `health()` reports. */
export interface WriteFailures {
  /** The latest refusal and when the refusals began (epoch ms), or null once a commit landed since. */
  readonly current: { failure: Failure; since: number; last: number } | null;
  /** A unit was rejected with `error`: noted when it is a refused write. */
  failed(error: unknown): void;
  /** A transaction committed: the database takes writes again. */
  committed(): void;
}

/** Creates the tracker of refused writes of one store. */
export function trackWriteFailures(): WriteFailures {
  let current: WriteFailures['current'] = null;
  return {
    get current() {
      return current;
    },
    failed(error) {
      if (!(error instanceof BatonError) || !isWriteFailure(error.failure)) return;
      const now = Date.now();
      current = { failure: error.failure, since: current?.since ?? now, last: now };
    },
    committed() {
      current = null;
    },
  };
}

/**
 * Runs a write made outside a unit of work (a lease, a cancel request, a secret): a write the
 * database refused is noted in `failures` and rejects as `store.write_failed`, as a unit's does.
 * `write` is called at once, in this turn.
 */
export async function directWrite<T>(failures: WriteFailures, write: () => T | Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const failed = toWriteError(error);
    failures.failed(failed);
    throw failed;
  }
}
