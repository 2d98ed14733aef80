/** The tables of a Baton database, as Kysely sees them: snake_case, epoch-ms integers, JSON as text. */
import type { Generated } from 'kysely';
import type { Effect, ListedStatus, StopReason, WaitReason } from '../../machines/types.js';
import type {
  ApprovalKind,
  ApprovalResolution,
  ApprovalStatus,
  MessageRole,
  LogEventType,
  ToolCallStatus,
} from './vocabulary.js';

export interface SessionTable {
  id: string;
  created_at: number;
  updated_at: number;
}

export interface MessageTable {
  id: Generated<number>;
  session_id: string;
  run_id: string | null;
  role: MessageRole;
  content: string;
  created_at: number;
}

export interface RunTable {
  id: string;
  session_id: string;
  /** One of the six public states, or `queued` (a damaged row may hold anything: `checkRunRow` tells). */
  status: ListedStatus;
  stop_reason: StopReason | null;
  failure: string | null;
  wait_reason: WaitReason | null;
  pending_approval_id: string | null;
  input: string;
  context: string;
  options: string;
  idempotency_key: string | null;
  /** The tenant of `context.tenant_id`, for filtering (null before migration 3 or without one). */
  tenant_id: string | null;
  answer: string | null;
  snapshot: string;
  /** The machine the snapshot belongs to (`baton.run`, or a variant's name; migration 5). */
  machine_name: string;
  machine_version: number;
  version: number;
  step_index: number;
  llm_calls: number;
  tool_calls: number;
  tokens: number;
  cost_usd: number;
  deadline_at: number | null;
  /** When a waiting run must be loaded again (its deadline, a durable delay; 0: a decision is committed); migration 7. */
  wake_at: number | null;
  owner: string | null;
  lease_until: number | null;
  /** Claims so far: a fenced write carries the epoch it was claimed with (migration 8). */
  epoch: Generated<number>;
  /** A cancel asked of this run by a runtime that does not drive it (`{"reason","at"}` JSON), for the one that does. */
  cancel_requested: string | null;
  /**
   * A pause asked of this active run (`{"reason","by","at"}` JSON) and not yet reached: whoever
   * drives the run carries it into its machine; taken (null) in the write that enters the pause
   * (migration 23; PostgreSQL 16).
   */
  pause_requested: string | null;
  /** What a compensating run undid and could not, as JSON (migration 11); null when none was asked. */
  compensation: string | null;
  /** The agent whose runtimes drive this run (migration 12); null for runs from before, which any agent drives. */
  agent: string | null;
  /** A fingerprint of the tools the agent had when the run started (migration 12). */
  agent_tools: string | null;
  /** The run this one was forked from (`runtime.fork`; migration 15), else null. */
  forked_from: string | null;
  /** The terms of a fork (JSON `ForkTerms`: the step, repeat_effects, a given decision; migration 15). */
  fork: string | null;
  /** The run whose call started this one (an agent called as a tool; migration 16), else null. */
  parent_run_id: string | null;
  /** The ledger call of the parent that started this run (migration 16): this run's id is derived from it. */
  parent_call_id: string | null;
  /** A queued run's place in its session's queue (migration 22): its creation time, 0 for one that interrupts; null once it may go. */
  queue_order: number | null;
  /** What the run was started with to be found by (migration 24): a JSON object of scalars, or null. */
  metadata: string | null;
  /** Its tags (migration 24): a JSON array of strings, or null. */
  tags: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * A run's metadata entries and tags as search keys (migration 24): `m:<key>=<value>` and
 * `t:<tag>`, each with its run's creation time, so a search reads one index in the order of a
 * runs page (`run_labels_search`). Written with the run, deleted with it.
 */
export interface RunLabelTable {
  run_id: string;
  label: string;
  created_at: number;
}

/**
 * A slot of a limit taken by a call (migration 25): `scope` names the limit and its key
 * (`tool:<name>:c:<key>`, `tool:<name>:r:<key>`, `planner:c:<key>`), `slot` is one of
 * `0 … limit-1`. A slot whose `expires_at` passed is free. A concurrency slot's owner renews it
 * while the call runs, so a crashed worker's slots come back when their lease lapses; a rate
 * limit's turn (owner '') lapses an interval after it was taken.
 */
export interface LimitSlotTable {
  scope: string;
  slot: number;
  /** The call (or planner call) holding it. */
  holder: string;
  /** The runtime holding it (`host:pid:instance`), whose heartbeat renews it. */
  owner: string;
  expires_at: number;
}

/**
 * What every worker shares of one limit key (migration 25): the back-off after a 429
 * (`blocked_until`, and how many 429s came in a row, `strikes`).
 */
export interface LimitKeyTable {
  scope: string;
  blocked_until: number;
  strikes: number;
}

/**
 * A schedule (migration 26): what it starts (`definition`, JSON, as the client gave it, normalized)
 * and when (`next_at`, its next tick; null once a one-shot `at` has fired). `id` is scoped by tenant
 * like a session's; `agent` is the agent whose runtimes tick it. A tick is taken by a
 * compare-and-set on `next_at`, after its run was started with the tick's idempotency key, so each
 * tick starts one run whatever the number of workers.
 */
export interface ScheduleTable {
  id: string;
  tenant_id: string | null;
  agent: string | null;
  definition: string;
  /** A hash of the definition: the same id with another definition is a conflict. */
  spec_hash: string;
  /** `active`, `paused`, or `done` (a one-shot that fired). */
  status: string;
  next_at: number | null;
  last_tick_at: number | null;
  last_run_id: string | null;
  /** Runs its ticks started, and ticks that started none (overlap `skip`, missed with catch-up `none`). */
  runs: number;
  skipped: number;
  created_at: number;
  updated_at: number;
}

export interface StepTable {
  run_id: string;
  step_index: number;
  decision: string;
  usage: string;
  /** What the context builder included, truncated and dropped, as JSON (null before migration 2). */
  context: string | null;
  /** The version of each tool the planner was offered for this decision, as JSON (migration 12; null before). */
  tool_versions: string | null;
  /** The agent that planned the step: the top of the run's handoff stack (migration 17; null before). */
  agent: string | null;
  /** The memory version its planner read (migration 18; null when its agent has no memory tools, or before). */
  memory_version: number | null;
  created_at: number;
}

export interface ToolCallTable {
  id: string;
  run_id: string;
  step_index: number;
  call_index: number;
  tool: string;
  tool_version: string | null;
  effect: Effect | null;
  args: string;
  args_hash: string;
  status: ToolCallStatus;
  result: string | null;
  attempts: number;
  started_at: number | null;
  finished_at: number | null;
  /** When the attempt in progress times out (epoch ms): a deadline, so a restart cannot extend it. */
  deadline_at: number | null;
  /** Set when a person edited the arguments before approving (JSON `{ proposed_args, by, reason }`; migration 14). */
  edited: string | null;
  /** For a row a fork copied from its source: the source's row (migration 15); its effect is the source's. */
  copied_from: string | null;
  /** The idempotency key the call runs with when it is not its own id (a copy, a fork's repeat of an idempotent call; migration 15). */
  idempotency_key: string | null;
  /** The child run this call started (an agent called as a tool; migration 16), else null. */
  child_run_id: string | null;
  /** The handle of work the call started elsewhere (an MCP task), saved before it waits (JSON; migration 19). */
  handle: string | null;
}

export interface ApprovalTable {
  id: string;
  run_id: string;
  step_index: number;
  kind: ApprovalKind;
  tool_call_ids: string;
  args_hash: string;
  status: ApprovalStatus;
  resolution: ApprovalResolution | null;
  decided_by: string | null;
  reason: string | null;
  created_at: number;
  decided_at: number | null;
  /** JSON list of decisions the machine took without deciding the approval (migration 5). */
  votes: string;
  /** What the wait asks, by kind (JSON, migration 14): a question and its schema, a budget and its use, a policy's reason. */
  request: string | null;
  /** The role that may decide it (migration 14): `approve`, or the one a policy or an escalation names. */
  role: string;
  /** When no decision counts any more (epoch ms; migration 14): the `expiry` outcome applies then. */
  expires_at: number | null;
  /** What happens at `expires_at` (JSON `{ outcome, role? }`; migration 14). */
  expiry: string | null;
  /** What the decider gave (JSON; migration 14): an answer, edited arguments, a call's output, new limits. */
  answer: string | null;
}

export interface EventTable {
  run_id: string;
  seq: number;
  type: LogEventType;
  data: string;
  created_at: number;
  /** SQLite only (migration 20): the event's place in the feed (`run.created` and `state` events), null for others. */
  position?: number | null;
}

/** SQLite only (migration 20): the highest feed position a prune deleted; new ones go above it. */
export interface FeedFloorTable {
  id: number;
  position: number;
}

/**
 * PostgreSQL: the events `GET /v1/events` sends, numbered across runs in commit order (filled by
 * a trigger on `events`). `id` is the insertion order; `position` the order readers see, given
 * once the row is committed (null until then). SQLite numbers the events themselves
 * (`events.position`).
 */
export interface EventFeedTable {
  id: Generated<number>;
  position: number | null;
  run_id: string;
  seq: number;
}

/** Random keys created once per database and shared by every process on it (migration 13). */
export interface SecretTable {
  name: string;
  value: string;
  created_at: number;
}

export interface ArtifactTable {
  sha256: string;
  size: number;
  media_type: string;
  content: Buffer;
  created_at: number;
}

/** Which run stored which artifact (migration 10): content shared by runs stays while one of them remains. */
export interface ArtifactRefTable {
  sha256: string;
  run_id: string;
}

/**
 * Entries of the versioned memory (migration 18): every write is a new row, whose `seq` is the
 * memory's version after it (one counter for every scope, in commit order). `value` is JSON, or
 * null for a deleted entry. A scope is a session's (`session:<tenant-scoped id>`) or a tenant's
 * (`tenant:<id>`); the call that wrote it makes it once (`tool_call_id` is unique).
 */
export interface MemoryTable {
  seq: number;
  scope: string;
  key: string;
  value: string | null;
  run_id: string;
  tool_call_id: string;
  created_at: number;
}

export interface MigrationTable {
  version: number;
  name: string;
  applied_at: number;
}

/** The whole database, for Kysely's query builder. */
export interface Database {
  sessions: SessionTable;
  messages: MessageTable;
  runs: RunTable;
  steps: StepTable;
  tool_calls: ToolCallTable;
  approvals: ApprovalTable;
  events: EventTable;
  event_feed: EventFeedTable;
  feed_floor: FeedFloorTable;
  baton_secrets: SecretTable;
  artifacts: ArtifactTable;
  artifact_refs: ArtifactRefTable;
  run_labels: RunLabelTable;
  limit_slots: LimitSlotTable;
  limit_keys: LimitKeyTable;
  schedules: ScheduleTable;
  memory: MemoryTable;
  baton_migrations: MigrationTable;
}
