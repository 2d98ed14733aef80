/**
 * Storage. One contract (`Store`, in `store-api.ts`) that each dialect implements directly:
 * SQLite (one opener with WAL, synchronous=FULL, foreign keys, busy timeout; a group-commit
 * queue) and PostgreSQL (`postgres/`); numbered migrations for each. Invariants: snapshot
 * writes are compare-and-set on `version`; events are numbered per run 1..n; one active run
 * per session is a unique index.
 */
export { openDatabase, migrate, type OpenDatabase } from './open-database.js';
export { createCommitQueue, type CommitQueue } from './commit-queue.js';
export { MIGRATIONS, type Migration } from './migrations.js';
export { createSqliteStore, type SqliteStore } from './sqlite-store.js';
export { createPostgresStore } from './postgres/pg-store.js';
export { openStore, isPostgresUrl, type OpenedStore } from './open-store.js';
export {
  isUniqueViolation,
  versionConflict,
  approvalTaken,
  toWriteError,
  writeFailureCause,
  isWriteFailure,
} from './store-errors.js';
export type * from './store-api.js';
export type { Database } from './schema.js';
export {
  TOOL_CALL_STATUSES,
  SETTLED_TOOL_CALL_STATUSES,
  FAILED_TOOL_CALL_STATUSES,
  APPROVAL_KINDS,
  APPROVAL_STATUSES,
  APPROVAL_RESOLUTIONS,
  EVENT_TYPES,
  MESSAGE_ROLES,
  type ToolCallStatus,
  type ApprovalKind,
  type ApprovalStatus,
  type ApprovalResolution,
  type RunEventName,
  type MessageRole,
} from './vocabulary.js';
