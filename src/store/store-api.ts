/**
 * The store's contract, written once: the row types, and what the runtime asks of its storage,
 * job by job (reads, leases, the feed, retention, and units of work). SQLite (`sqlite-store.ts`)
 * and PostgreSQL (`postgres/pg-store.ts`) each implement it directly.
 */
import type { Selectable } from 'kysely';
import type { Failure } from '../failure.js';
import type {
  ApprovalTable,
  ArtifactTable,
  EventTable,
  MemoryTable,
  MessageTable,
  RunTable,
  StepTable,
  ToolCallTable,
} from './schema.js';
import type { ListedStatus, RunStatus, StopReason, WaitReason } from '../../machines/types.js';
import type { ApprovalResolution, ApprovalStatus } from './vocabulary.js';
import type { PruneBatch, PruneSelection } from './prune-statements.js';
import type { AgentSet } from './compile.js';

export type { PruneBatch, PruneCounts, PruneSelection } from './prune-statements.js';

export type RunRow = Selectable<RunTable>;
export type StepRow = Selectable<StepTable>;
export type ToolCallRow = Selectable<ToolCallTable>;
export type ApprovalRow = Selectable<ApprovalTable>;
/** A run's event as stored (SQLite's feed position, `events.position`, is the feed's business only). */
export type EventRow = Omit<Selectable<EventTable>, 'position'>;
export type ArtifactRow = Selectable<ArtifactTable>;
export type MessageRow = Selectable<MessageTable>;
export type MemoryRow = Selectable<MemoryTable>;
/** An event of the feed (`run.created`, `state`) with its position across runs. */
export type FeedRow = EventRow & { position: number };

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
  /** See `RunTable.compensation`. */
  compensation: string | null;
  /** The run's deadline as its context holds it (a person may have moved it). */
  deadline_at: number | null;
  updated_at: number;
}

/** Filter for `listRuns`; `cursor` is the `created_at:id` of the last row already seen. */
export interface RunFilter {
  status?: ListedStatus | undefined;
  sessionId?: string | undefined;
  tenantId?: string | undefined;
  /** Only the forks of this run (`runs.forked_from`). */
  forkedFrom?: string | undefined;
  /** Only the child runs this run started (`runs.parent_run_id`: an agent called as a tool). */
  parentRunId?: string | undefined;
  /** Only runs with every one of these search keys (`m:<key>=<value>`, `t:<tag>`; at most `MAX_LABEL_FILTERS`). */
  labels?: readonly string[] | undefined;
  /** Only runs whose failure has this code. */
  failureCode?: string | undefined;
  /** Only runs created at or after this instant (ms), and before that one. */
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * Everything a fork copies from its source, read as one consistent snapshot of the database (a
 * run another process drives is read at one instant: its row and the rows of the steps it has
 * reached agree): the run, its journal, ledger, waits, events, and its session's history.
 */
export interface ForkSource {
  run: RunRow;
  steps: StepRow[];
  toolCalls: ToolCallRow[];
  approvals: ApprovalRow[];
  events: EventRow[];
  messages: MessageRow[];
}

/** An approval's decision, as the store writes it. */
export interface ApprovalDecision {
  status: ApprovalStatus;
  resolution: ApprovalResolution | null;
  by: string;
  reason: string | null;
  at: number;
  /** What the decider gave (JSON), or null. */
  answer: string | null;
  /** The hash the approval is bound to from now on (another one when a person edited arguments). */
  args_hash: string;
}

/** An escalation of a pending wait: the role that decides it from now on, and its next expiry. */
export interface ApprovalEscalation {
  role: string;
  expires_at: number | null;
  expiry: string | null;
}

/**
 * The writes of one unit of work. Synchronous: SQLite runs each at once inside the shared
 * transaction; PostgreSQL records them and runs them as one transaction when the unit commits.
 * A write whose condition fails (a snapshot at another version, an approval no longer pending)
 * fails the whole unit, and only that unit: its writes are undone, its promise rejects.
 */
export interface UnitWriter {
  /** Creates the session, or touches its `updated_at`. */
  ensureSession(id: string, now: number): void;
  /** A new run; an idempotency key or an active session already taken fails the unit (`isUniqueViolation`). */
  insertRun(row: RunRow): void;
  /** Fails the unit (`run.tenant_limit`) when the tenant has more than `cap` runs active, the one it inserts included. */
  capTenant(tenantId: string | null, cap: number): void;
  /** Writes a transition's snapshot and counters if the row is still at `expected_version` (compare-and-set); else `run.version_conflict`. */
  saveProgress(progress: RunProgress): void;
  setAnswer(runId: string, answer: string): void;
  /** Sets when a run must be loaded again (0: at once). */
  setWakeAt(id: string, at: number | null): void;
  /** Makes the head of the session's queue `pending` if the session has no active run (`promoteQueueHead`). */
  promoteQueueHead(sessionId: string, now: number): void;
  /** Asks whoever drives another active run to cancel it (`request` as `requestCancel` stores it); a waiting one becomes due. */
  askCancel(id: string, request: string): void;
  /** A search key of a new run (`run_labels`), written in its creation's unit. */
  insertLabel(runId: string, label: string, createdAt: number): void;
  /** Takes the pause asked of the run (`requestPause`): written with the transition that reaches it. */
  takePauseRequest(id: string): void;
  /** Journals a planner decision (once per step). */
  insertStep(row: StepRow): void;
  /** Inserts or replaces a ledger row. */
  putToolCall(row: ToolCallRow): void;
  insertApproval(row: ApprovalRow): void;
  /** Single use: decides a pending approval; one no longer pending fails the unit (`approval.already_decided`). */
  decideApproval(id: string, decision: ApprovalDecision): void;
  /** Records the votes of a still pending approval; one no longer pending fails the unit. */
  setApprovalVotes(id: string, votes: string): void;
  /** Hands a still pending wait to another role; one no longer pending fails the unit. */
  escalateApproval(id: string, escalation: ApprovalEscalation): void;
  insertEvent(row: EventRow): void;
  /** Stores content by its sha256 for run `runId` (a second put of the same bytes is a no-op; the run's reference is kept). */
  putArtifact(row: ArtifactRow, runId: string): void;
  insertMessage(row: Omit<MessageRow, 'id'>): void;
  /** Records that run `runId` holds an artifact already stored (a fork's copy of its source's). */
  refArtifact(sha256: string, runId: string): void;
  /** Writes a memory entry as the next version (a second write by the same call is a no-op). */
  putMemory(row: Omit<MemoryRow, 'seq'>): void;
}

/** A run whose lease was renewed, and the cancel asked of it, if any. */
export interface HeldRun {
  id: string;
  cancel_requested: string | null;
  pause_requested: string | null;
}

/** A run a worker now holds, and the epoch its writes carry. */
export interface Claim {
  id: string;
  epoch: number;
}

/**
 * What another process sharing the database announced after a commit: runs that need driving
 * (new, decided, handed off), events committed for a run (`from`..`to`), a cancel asked of a run
 * (for the runtime that drives it), or that notifications
 * may have been missed (the listening connection was re-established).
 */
export type StoreNote =
  | { kind: 'runs' }
  | { kind: 'events'; runId: string; from: number; to: number; status: string | null }
  | { kind: 'cancel'; runId: string }
  | { kind: 'reconnected' };

/** The claim a unit of a run is written under: on PostgreSQL nothing commits once another worker claimed the run since. */
export interface Fence {
  runId: string;
  owner: string;
  epoch: number;
}

/** What a store reads: runs, the rows of a run, a session's history. */
export interface StoreReads {
  getRun(id: string): Promise<RunRow | undefined>;
  findRunByIdempotencyKey(key: string): Promise<RunRow | undefined>;
  /** The session's one non-terminal run, if any (a unique index keeps it one). */
  activeRunOfSession(sessionId: string): Promise<RunRow | undefined>;
  /** Up to `limit` sessions with queued runs and no active run: queues no run's end handed on. */
  orphanQueues(limit: number): Promise<string[]>;
  /** The soonest instant a run started with `startAt` is due, or null when none waits. */
  nextDelayedStart(): Promise<number | null>;
  /** Runs newest first, filtered and paged (`RunFilter`). */
  listRuns(filter: RunFilter): Promise<RunRow[]>;
  /** Runs whose status is none of `statuses` (damaged rows). */
  runIdsWithStatusNotIn(statuses: readonly string[]): Promise<string[]>;
  /** Runs in flight (pending, planning, executing), oldest first: what recovery resumes. */
  inFlightRunIds(): Promise<string[]>;
  /** Up to `limit` runs in flight of agents the set does not name whose leases are free or lapsed. */
  orphansOfOtherAgents(agents: AgentSet, limit: number): Promise<{ id: string; agent: string }[]>;
  /** Waiting runs after the `(created_at, id)` cursor, oldest first, a page at a time (an index seek each). */
  waitingRunsPage(after: { createdAt: number; id: string } | null, limit: number): Promise<RunRow[]>;
  /** Waiting runs due at `now`, in wake order after the `(wake_at, id)` cursor; of the set's agents only, when given. */
  dueWaitingRuns(
    now: number,
    after: { wakeAt: number; id: string } | null,
    limit: number,
    agents?: AgentSet | null,
  ): Promise<{ id: string; wake_at: number }[]>;
  /** The earliest wake-up of a waiting run after `now`, if any; of the set's agents' runs only, when given. */
  nextWake(now: number, agents?: AgentSet | null): Promise<number | null>;

  listSteps(runId: string): Promise<StepRow[]>;
  getToolCall(id: string): Promise<ToolCallRow | undefined>;
  /** The ledger of a run, in step and call order. */
  listToolCalls(runId: string): Promise<ToolCallRow[]>;
  getApproval(id: string): Promise<ApprovalRow | undefined>;
  /** The approvals of a run, oldest first. */
  listApprovals(runId: string): Promise<ApprovalRow[]>;
  /** A page of a run's events with `seq` above `after`, in order. */
  listEvents(runId: string, after?: number, limit?: number): Promise<EventRow[]>;
  /** The highest `seq` of a run (0 without events). */
  lastSeq(runId: string): Promise<number>;
  /** A run's events of one type, in order. */
  eventsOfType(runId: string, type: string): Promise<EventRow[]>;
  getArtifact(sha256: string): Promise<ArtifactRow | undefined>;
  /** A session's committed history, oldest first. */
  listMessages(sessionId: string): Promise<MessageRow[]>;
  /** The memory's version now: the last write's (0 before any). */
  memoryVersion(): Promise<number>;
  /** The entries of the memory scopes as of `version`: each key's last write at or below it, deleted ones left out. */
  readMemory(scopes: readonly string[], version: number): Promise<MemoryRow[]>;
  /** What a fork of run `runId` copies, read in one snapshot (`ForkSource`); undefined when there is no such run. */
  readForkSource(runId: string): Promise<ForkSource | undefined>;
}

/**
 * Who drives which run. Lease changes are made outside any unit of work, one statement each; one
 * the database refuses fails as a unit's write does (`store.write_failed`, noted in `writeFailure`).
 */
export interface StoreLeases {
  /**
   * Takes the lease of a run for `leaseMs` if it is free, lapsed, ours, or its owner is known
   * dead; the epoch its writes carry from now on, or null when another owner holds it. Lease
   * times are the database's clock on PostgreSQL.
   */
  claimRun(id: string, owner: string, leaseMs: number, isDead: (owner: string) => boolean): Promise<number | null>;
  /** Claims up to `limit` runs in flight that no one holds or whose lease lapsed (a worker's poll); of the set's agents only, when given. */
  claimRuns(owner: string, leaseMs: number, limit: number, agents?: AgentSet | null): Promise<Claim[]>;
  /** The owners holding runs in flight. */
  inFlightOwners(): Promise<string[]>;
  /** Claims up to `limit` runs in flight held by `dead` (known to be gone), before their leases lapse. */
  claimRunsOf(dead: string, owner: string, leaseMs: number, limit: number, agents?: AgentSet | null): Promise<Claim[]>;
  /** Extends the leases `owner` holds on the given runs (the ones it drives): the runs it still holds, with any cancel asked of them. */
  renewLeases(owner: string, leaseMs: number, ids: readonly string[]): Promise<HeldRun[]>;
  /** Asks whoever drives an active run to cancel it (`request`: `{"reason","at"}` JSON); false if the run is not active. */
  requestCancel(id: string, request: string): Promise<boolean>;
  /**
   * Asks whoever drives a run (or loads it next) to pause it before its next step (`request`:
   * `{"reason","by","at"}` JSON); false if the run is not active or a pause is asked already.
   */
  requestPause(id: string, request: string): Promise<boolean>;
  /**
   * Decides a question another runtime's call waits on in flight (that runtime holds the run and
   * reads the decision from here): single use, false when it is no longer pending.
   */
  decideInFlight(id: string, decision: ApprovalDecision): Promise<boolean>;
  /** Lets go of a run `owner` holds; with `epoch`, only if no claim came since (a late release changes nothing). */
  releaseLease(id: string, owner: string, epoch?: number): Promise<void>;
  releaseLeases(owner: string): Promise<void>;
}

/** A slot of a concurrency limit held now. */
export interface LimitSlotRow {
  slot: number;
  holder: string;
  owner: string;
  expires_at: number;
}

/** Whether a limit let a call through now; if not, how long to wait before asking again (ms). */
export type LimitTake =
  { ok: true; slot: number } | { ok: false; waitMs: number; why: 'concurrency' | 'rate' | 'backoff' };

/**
 * Per-key limits shared by every runtime on the database (`limit_slots`, `limit_keys`; docs/
 * architecture.md §4.13), each change one autocommitted statement outside any unit (a refused one
 * fails as a unit's write does). Times are the database's clock on PostgreSQL.
 */
export interface StoreLimits {
  /**
   * Takes a free slot of a concurrency limit of `limit` slots for `holder` (a lease of `leaseMs`
   * its owner renews with `renewSlots`), unless the key backs off; else how long to wait.
   */
  takeSlot(scope: string, limit: number, holder: string, owner: string, leaseMs: number): Promise<LimitTake>;
  /** Gives a slot back (a no-op when its lease lapsed and another holder took it). */
  releaseSlot(scope: string, slot: number, holder: string): Promise<void>;
  /** Extends the leases of every slot `owner` holds. */
  renewSlots(owner: string, leaseMs: number): Promise<void>;
  /** Gives back every slot `owner` holds. */
  releaseSlotsOf(owner: string): Promise<void>;
  /**
   * Takes a turn of a rate limit of `limit` calls in any window of `intervalMs` for `holder` (a
   * slot that lapses `intervalMs` after), unless the key backs off; else how long to wait.
   */
  takeRate(scope: string, limit: number, intervalMs: number, holder: string): Promise<LimitTake>;
  /**
   * Backs the key off for every runtime after a 429: for `afterMs` (the service's hint), else a
   * second doubled with each 429 in a row (up to a minute); how long, in ms.
   */
  backOffKey(scope: string, afterMs?: number): Promise<number>;
  /** A call of the key went through: no strikes any more. */
  clearStrikes(scope: string): Promise<void>;
  /** The slots of a key held now, by slot. */
  heldSlots(scope: string): Promise<LimitSlotRow[]>;
}

/** A stored schedule, as its row holds it (`schedules`). */
export interface ScheduleRow {
  id: string;
  tenant_id: string | null;
  agent: string | null;
  definition: string;
  spec_hash: string;
  status: 'active' | 'paused' | 'done';
  next_at: number | null;
  last_tick_at: number | null;
  last_run_id: string | null;
  runs: number;
  skipped: number;
  created_at: number;
  updated_at: number;
}

/** Taking a schedule's tick: from the tick expected to the next (null: none left). */
export interface TickTaken {
  id: string;
  expected: number;
  next_at: number | null;
  tick_at: number;
  run_id: string | null;
  started: number;
  skipped: number;
  now: number;
}

/** Schedules (`schedules`), each change one autocommitted statement. */
export interface StoreSchedules {
  /** Stores a new schedule; false when its id is taken (nothing changed). */
  insertSchedule(row: ScheduleRow): Promise<boolean>;
  getSchedule(id: string): Promise<ScheduleRow | undefined>;
  /** A tenant's schedules (all when null) by id, after `after`, at most `limit`. */
  listSchedules(tenant: string | null, after: string, limit: number): Promise<ScheduleRow[]>;
  /** Active schedules with a tick due at `now`, soonest first, of the set's agents (any when null). */
  dueSchedules(now: number, limit: number, agents: AgentSet | null): Promise<ScheduleRow[]>;
  /** The soonest next tick of any active schedule, or null. */
  nextScheduleAt(): Promise<number | null>;
  /** Takes a tick by compare-and-set on `next_at`: false when another runtime took it (or it was paused). */
  takeTick(tick: TickTaken): Promise<boolean>;
  /** Counts a run started by hand and remembers it as the last. */
  countTrigger(id: string, runId: string, now: number): Promise<void>;
  /** Pauses or resumes a schedule in the status `expected`: false when it is not. */
  setScheduleStatus(id: string, expected: string, status: string, nextAt: number | null, now: number): Promise<boolean>;
  /** Deletes a schedule; false when there was none. */
  deleteSchedule(id: string): Promise<boolean>;
}

/** What the runtimes sharing a database read in common: the feed of all runs' events, and its secrets. */
export interface StoreFeed {
  /**
   * The feed's events after `after`, in position order, at most `limit`; of `tenantId`'s runs
   * only, unless null. Positions are in commit order: one seen, no later read returns one below it.
   */
  readFeed(after: number, limit: number, tenantId: string | null): Promise<FeedRow[]>;
  /** The highest position of the feed so far (0 when empty): what a reader starting now has seen. */
  feedHead(): Promise<number>;
  /** The secret named `name`, created as `candidate` if the database has none (the first to ask wins). */
  sharedSecret(name: string, candidate: string): Promise<string>;
}

/** Retention: deleting finished runs, and what a dry run accounts for. */
export interface StoreRetention {
  /** Deletes one batch of finished runs with everything only they hold, as one unit (or, dry, counts it): `prune-statements.ts`. */
  pruneBatch(selection: PruneSelection): Promise<PruneBatch>;
  /** The newest finished runs of a status, newest first (what `keepLast` keeps). */
  newestFinished(status: string, limit: number): Promise<FinishedRun[]>;
  /** Every reference to the given artifacts, with their sizes (a dry run's accounting). */
  artifactRefsOf(sha256s: readonly string[]): Promise<{ sha256: string; run_id: string; size: number }[]>;
  /** The runs of the given sessions (a dry run's accounting). */
  runsOfSessions(sessionIds: readonly string[]): Promise<{ id: string; session_id: string }[]>;
  /**
   * Gives up to `maxPages` free pages back to the file system (SQLite with incremental
   * auto-vacuum; nothing on PostgreSQL, whose autovacuum reuses the space). What it freed and what is left.
   */
  reclaimSpace(maxPages: number): Promise<SpaceReclaimed>;
}

/**
 * Baton's storage as the runtime uses it, on either dialect: reads and lease changes are
 * asynchronous; writes are units of work (`write`) that commit atomically and resolve after
 * their COMMIT. Rows are snake_case, times epoch milliseconds, JSON stored as text. Each
 * dialect implements it whole (`createSqliteStore`, `createPostgresStore`), job by job.
 */
export interface Store extends StoreReads, StoreLeases, StoreLimits, StoreSchedules, StoreFeed, StoreRetention {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `work` in a unit of work and resolves with what it returned once the unit is durable.
   * On SQLite units queued in one turn share a transaction (one fsync), each in its own
   * savepoint; on PostgreSQL a run's units commit one after another, each fenced by `fence`.
   * `work` runs later (when the unit is written), never inside this call.
   */
  write<T>(work: (writer: UnitWriter) => T, fence?: Fence): Promise<T>;
  /** Transactions committed since the store opened. */
  readonly commits: number;
  /** Writes the database refused since the last transaction it committed (null when none). */
  readonly writeFailure: { failure: Failure; since: number; last: number } | null;
  /**
   * Hears what other processes commit (PostgreSQL's LISTEN/NOTIFY, sent after each commit);
   * a SQLite file has no such channel and never calls the listener. Returns the unsubscribe.
   */
  listen(listener: (note: StoreNote) => void): () => void;
  /** Commits what is queued and closes the database. */
  close(): Promise<void>;
}

/** A finished run's place in finish order. */
export interface FinishedRun {
  id: string;
  updated_at: number;
}

/** Pages given back by `reclaimSpace`, and free pages still in the file. */
export interface SpaceReclaimed {
  freed_pages: number;
  free_pages: number;
  page_size: number;
}
