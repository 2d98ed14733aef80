/**
 * How a unit of work fails, the same on both dialects: a conditional write that found the row
 * changed (another writer's version, an approval already decided), or a unique index hit.
 */
import { BatonError, createFailure } from '../failure.js';

/** The failure of a unit whose conditional write found the row changed by someone else. */
export function versionConflict(runId: string): BatonError {
  return new BatonError(createFailure('run.version_conflict', `Run '${runId}' was written by another runtime`));
}

/** The failure of a unit that decided (or voted on) an approval no longer pending. */
export function approvalTaken(id: string): BatonError {
  return new BatonError(createFailure('approval.already_decided', `Approval '${id}' is already decided`));
}

/** True for a unique-index violation on either dialect (a taken idempotency key or session). */
export function isUniqueViolation(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return code === '23505' || code.startsWith('SQLITE_CONSTRAINT');
}
