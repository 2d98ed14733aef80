/**
 * The store's contract: the row types, and what the runtime asks of its storage, member by
 * member. `store.ts` implements it on SQLite.
 */
import type { Selectable } from 'kysely';
import type { CommitQueue } from './commit-queue.js';
import type { OpenDatabase } from './open-database.js';
import type {
  ApprovalTable,
  ArtifactTable,
  EventTable,
  MessageTable,
  RunTable,
  StepTable,
  ToolCallTable,
} from './schema.js';
import type { RunStatus, StopReason, WaitReason } from '../../machines/types.js';
import type { ApprovalResolution, ApprovalStatus } from './vocabulary.js';

export type RunRow = Selectable<RunTable>;
export type StepRow = Selectable<StepTable>;
export type ToolCallRow = Selectable<ToolCallTable>;
export type ApprovalRow = Selectable<ApprovalTable>;
export type EventRow = Selectable<EventTable>;
export type ArtifactRow = Selectable<ArtifactTable>;
export type MessageRow = Selectable<MessageTable>;

/** The fields of a run that change with each persisted transition. */
export interface RunProgress {
  id: string;
  expected_version: number;
  snapshot: string;
  status: RunStatus;
  stop_reason: StopReason | null;
  failure: string | null;
  wait_reason: WaitReason | null;
  pending_approval_id: string | null;
  step_index: number;
  llm_calls: number;
  tool_calls: number;
  tokens: number;
  cost_usd: number;
  machine_version: number;
  /** See `RunTable.wake_at`. */
  wake_at: number | null;
  updated_at: number;
}

/** Filter for `listRuns`; `cursor` is the `created_at:id` of the last row already seen. */
export interface RunFilter {
  status?: RunStatus | undefined;
  sessionId?: string | undefined;
  tenantId?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * Baton's storage: one database file, its commit queue and its statements. Writes run inside a
 * `queue` unit of work (one transaction, one fsync, shared by every run that wrote in it);
 * reads run anywhere. Rows are snake_case, times epoch milliseconds, JSON stored as text.
 */
export interface Store {
  /** The open file (its better-sqlite3 handle and Kysely instance). */
  readonly db: OpenDatabase;
  /** The group-commit queue every write goes through. */
  readonly queue: CommitQueue;
  /** Commits what is queued and closes the file. */
  close(): void;

  /** Creates the session, or touches its `updated_at`. */
  ensureSession(id: string, now: number): void;
  insertRun(row: RunRow): void;
  getRun(id: string): RunRow | undefined;
  findRunByIdempotencyKey(key: string): RunRow | undefined;
  /** The session's one non-terminal run, if any (a unique index keeps it one). */
  activeRunOfSession(sessionId: string): RunRow | undefined;
  /** Runs newest first, filtered and paged (`RunFilter`). */
  listRuns(filter: RunFilter): RunRow[];
  /** Writes a transition's snapshot and counters if the row is still at `expected_version`; false if not (compare-and-set). */
  saveProgress(progress: RunProgress): boolean;
  setAnswer(runId: string, answer: string): void;
  /** Runs whose status is none of `statuses` (damaged rows). */
  runIdsWithStatusNotIn(statuses: readonly string[]): string[];
  /** Runs in flight (pending, planning, executing), oldest first: what recovery resumes. */
  inFlightRunIds(): string[];
  /** Waiting runs after the `(created_at, id)` cursor, oldest first, a page at a time (an index seek each). */
  waitingRunsPage(after: { createdAt: number; id: string } | null, limit: number): RunRow[];
  /** Waiting runs due at `now`, in wake order after the `(wake_at, id)` cursor. */
  dueWaitingRuns(
    now: number,
    after: { wakeAt: number; id: string } | null,
    limit: number,
  ): { id: string; wake_at: number }[];
  /** The earliest wake-up of a waiting run after `now`, if any. */
  nextWake(now: number): number | null;
  /** Sets when a run must be loaded again (0: at once). */
  setWakeAt(id: string, at: number | null): void;

  /** Takes the lease of a run if it is free, expired, ours, or its owner is known dead. */
  claimRun(id: string, owner: string, leaseUntil: number, now: number, isDead: (owner: string) => boolean): boolean;
  /** Extends the leases `owner` holds on the given runs (the ones it drives). */
  renewLeases(owner: string, leaseUntil: number, ids: readonly string[]): void;
  releaseLease(id: string, owner: string): void;
  releaseLeases(owner: string): void;

  /** Journals a planner decision (once per step). */
  insertStep(row: StepRow): void;
  listSteps(runId: string): StepRow[];

  getToolCall(id: string): ToolCallRow | undefined;
  /** Inserts or replaces a ledger row. */
  putToolCall(row: ToolCallRow): void;
  /** The ledger of a run, in step and call order. */
  listToolCalls(runId: string): ToolCallRow[];

  insertApproval(row: ApprovalRow): void;
  getApproval(id: string): ApprovalRow | undefined;
  /** Single use: only a pending approval can be decided; returns false otherwise. */
  decideApproval(
    id: string,
    decision: {
      status: ApprovalStatus;
      resolution: ApprovalResolution | null;
      by: string;
      reason: string | null;
      at: number;
    },
  ): boolean;
  /** Records the votes of a still pending approval; returns false once it is decided. */
  setApprovalVotes(id: string, votes: string): boolean;
  /** The approvals of a run, oldest first. */
  listApprovals(runId: string): ApprovalRow[];

  insertEvent(row: EventRow): void;
  /** A page of a run's events with `seq` above `after`, in order. */
  listEvents(runId: string, after?: number, limit?: number): EventRow[];
  /** The highest `seq` of a run (0 without events). */
  lastSeq(runId: string): number;

  /** Stores content by its sha256 (a second put of the same bytes is a no-op). */
  putArtifact(row: ArtifactRow): void;
  getArtifact(sha256: string): ArtifactRow | undefined;

  insertMessage(row: Omit<MessageRow, 'id'>): void;
  /** A session's committed history, oldest first. */
  listMessages(sessionId: string): MessageRow[];
}
