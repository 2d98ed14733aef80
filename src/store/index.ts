/**
 * Storage. One contract (`Store`, in `store-api.ts`) that each dialect implements directly:
 * SQLite (one opener with WAL, synchronous=FULL, foreign keys, busy timeout; a group-commit
 * queue) and PostgreSQL (`postgres/`); numbered migrations for each. Invariants: snapshot
 * writes are compare-and-set on `version`; events are numbered per run 1..n; one active run
 * per session is a unique index.
 */
export { openDatabase } from './open-database.js';
export { MIGRATIONS } from './migrations.js';
export { createSqliteStore, type SqliteStore } from './sqlite-store.js';
export { createPostgresStore } from './postgres/pg-store.js';
export { openStore, isPostgresUrl, type OpenedStore } from './open-store.js';
export { isUniqueViolation, toWriteError, isWriteFailure } from './store-errors.js';
export { zeroCounts } from './prune-statements.js';
export { agentSet, type AgentSet } from './compile.js';
export type * from './store-api.js';
export {
  TOOL_CALL_STATUSES,
  SETTLED_TOOL_CALL_STATUSES,
  FAILED_TOOL_CALL_STATUSES,
  LOG_EVENT_TYPES,
  type ToolCallStatus,
  type ApprovalKind,
  type ApprovalStatus,
  type ApprovalResolution,
  type LogEventType,
} from './vocabulary.js';
