/**
 * Row access for the runtime: every per-transition statement is a cached prepared statement
 * (Kysely builds the dynamic queries; the hot path skips its async driver). All writes are
 * meant to run inside a `CommitQueue` unit of work; reads may run anywhere.
 */
import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { createCommitQueue, type CommitQueue } from './commit-queue.js';
import { openDatabase, type OpenDatabase } from './open-database.js';
import type {
  ApprovalRow,
  ArtifactRow,
  EventRow,
  MessageRow,
  RunFilter,
  RunProgress,
  RunRow,
  StepRow,
  Store,
  ToolCallRow,
} from './store-api.js';

export type * from './store-api.js';

/** Opens a store on a database file (created and migrated if needed). */
export function createStore(path: string): Store {
  const db: OpenDatabase = openDatabase(path);
  const { sqlite } = db;
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (text: string): SQLite.Statement => {
    let statement = cache.get(text);
    if (!statement) cache.set(text, (statement = sqlite.prepare(text)));
    return statement;
  };
  const queue: CommitQueue = createCommitQueue(sqlite);

  return {
    db,
    queue,
    close(): void {
      queue.flushNow();
      sqlite.close();
    },

    ensureSession(id: string, now: number): void {
      prepare(
        'insert into sessions (id, created_at, updated_at) values (?, ?, ?) on conflict (id) do update set updated_at = excluded.updated_at',
      ).run(id, now, now);
    },
    insertRun(row: RunRow): void {
      const columns = Object.keys(row);
      prepare(`insert into runs (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`).run(row);
    },
    getRun(id: string): RunRow | undefined {
      return prepare('select * from runs where id = ?').get(id) as RunRow | undefined;
    },
    findRunByIdempotencyKey(key: string): RunRow | undefined {
      return prepare('select * from runs where idempotency_key = ?').get(key) as RunRow | undefined;
    },
    activeRunOfSession(sessionId: string): RunRow | undefined {
      return prepare(
        "select * from runs where session_id = ? and status in ('pending', 'planning', 'executing', 'waiting_human')",
      ).get(sessionId) as RunRow | undefined;
    },
    listRuns(filter: RunFilter): RunRow[] {
      const compiled = compileListRuns(db.kysely, filter);
      return prepare(compiled.sql).all(...compiled.parameters) as RunRow[];
    },
    /** Compare-and-set on `version`: returns false when another writer got there first. */
    saveProgress(progress: RunProgress): boolean {
      const info = prepare(
        `update runs set snapshot = @snapshot, status = @status, stop_reason = @stop_reason, failure = @failure,
           wait_reason = @wait_reason, pending_approval_id = @pending_approval_id, step_index = @step_index,
           llm_calls = @llm_calls, tool_calls = @tool_calls, tokens = @tokens, cost_usd = @cost_usd, updated_at = @updated_at,
           machine_version = @machine_version,
           -- A committed decision (0) stands until the run leaves the wait it decides.
           wake_at = case when wake_at = 0 and @status = 'waiting_human' then 0 else @wake_at end,
           version = version + 1
         where id = @id and version = @expected_version`,
      ).run(progress);
      return info.changes === 1;
    },
    setAnswer(runId: string, answer: string): void {
      prepare('update runs set answer = ? where id = ?').run(answer, runId);
    },
    /** Runs whose status is none of `statuses` (damaged rows, for recovery to report). */
    runIdsWithStatusNotIn(statuses: readonly string[]): string[] {
      const marks = statuses.map(() => '?').join(', ');
      return (prepare(`select id from runs where status not in (${marks})`).all(...statuses) as { id: string }[]).map(
        (r) => r.id,
      );
    },
    /** Takes the lease of a run if it is free, expired, ours, or its owner is known dead. */
    claimRun(id: string, owner: string, leaseUntil: number, now: number, isDead: (owner: string) => boolean): boolean {
      const free = prepare('select owner, lease_until from runs where id = ?').get(id) as
        { owner: string | null; lease_until: number | null } | undefined;
      if (!free) return false;
      const claimable =
        free.owner === null || free.owner === owner || (free.lease_until ?? 0) < now || isDead(free.owner);
      if (!claimable) return false;
      const info = prepare('update runs set owner = ?, lease_until = ? where id = ? and owner is ?').run(
        owner,
        leaseUntil,
        id,
        free.owner,
      );
      return info.changes === 1;
    },
    renewLeases(owner: string, leaseUntil: number, ids: readonly string[]): void {
      // Only the runs this runtime drives, looked up by id; finished runs keep their last owner.
      prepare(
        "update runs set lease_until = ? where id in (select value from json_each(?)) and owner = ? and status in ('pending', 'planning', 'executing', 'waiting_human')",
      ).run(leaseUntil, JSON.stringify(ids), owner);
    },
    inFlightRunIds(): string[] {
      return (
        prepare(
          "select id from runs where status in ('pending', 'planning', 'executing') order by created_at",
        ).all() as { id: string }[]
      ).map((r) => r.id);
    },
    waitingRunsPage(after: { createdAt: number; id: string } | null, limit: number): RunRow[] {
      return prepare(
        "select * from runs where status = 'waiting_human' and (created_at, id) > (?, ?) order by created_at, id limit ?",
      ).all(after?.createdAt ?? -1, after?.id ?? '', limit) as RunRow[];
    },
    dueWaitingRuns(now: number, after: { wakeAt: number; id: string } | null, limit: number) {
      return prepare(
        `select id, wake_at from runs where status = 'waiting_human' and wake_at <= ?
           and (wake_at, id) > (?, ?) order by wake_at, id limit ?`,
      ).all(now, after?.wakeAt ?? -1, after?.id ?? '', limit) as { id: string; wake_at: number }[];
    },
    nextWake(now: number): number | null {
      return (
        (prepare("select min(wake_at) from runs where status = 'waiting_human' and wake_at > ?").pluck().get(now) as
          number | null) ?? null
      );
    },
    setWakeAt(id: string, at: number | null): void {
      prepare('update runs set wake_at = ? where id = ?').run(at, id);
    },
    releaseLease(id: string, owner: string): void {
      prepare('update runs set owner = null, lease_until = null where id = ? and owner = ?').run(id, owner);
    },
    releaseLeases(owner: string): void {
      prepare('update runs set owner = null, lease_until = null where owner = ?').run(owner);
    },

    insertStep(row: StepRow): void {
      prepare(
        'insert into steps (run_id, step_index, decision, usage, context, created_at) values (@run_id, @step_index, @decision, @usage, @context, @created_at)',
      ).run(row);
    },
    listSteps(runId: string): StepRow[] {
      return prepare('select * from steps where run_id = ? order by step_index').all(runId) as StepRow[];
    },

    getToolCall(id: string): ToolCallRow | undefined {
      return prepare('select * from tool_calls where id = ?').get(id) as ToolCallRow | undefined;
    },
    putToolCall(row: ToolCallRow): void {
      prepare(
        `insert into tool_calls (id, run_id, step_index, call_index, tool, tool_version, effect, args, args_hash, status, result, attempts, started_at, finished_at, deadline_at)
         values (@id, @run_id, @step_index, @call_index, @tool, @tool_version, @effect, @args, @args_hash, @status, @result, @attempts, @started_at, @finished_at, @deadline_at)
         on conflict (id) do update set status = excluded.status, result = excluded.result, attempts = excluded.attempts,
           started_at = excluded.started_at, finished_at = excluded.finished_at, deadline_at = excluded.deadline_at`,
      ).run(row);
    },
    listToolCalls(runId: string): ToolCallRow[] {
      return prepare('select * from tool_calls where run_id = ? order by step_index, call_index').all(
        runId,
      ) as ToolCallRow[];
    },

    insertApproval(row: ApprovalRow): void {
      const columns = Object.keys(row);
      prepare(`insert into approvals (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`).run(
        row,
      );
    },
    getApproval(id: string): ApprovalRow | undefined {
      return prepare('select * from approvals where id = ?').get(id) as ApprovalRow | undefined;
    },
    /** Single use: only a pending approval can be decided; returns false otherwise. */
    decideApproval(
      id: string,
      decision: { status: string; resolution: string | null; by: string; reason: string | null; at: number },
    ): boolean {
      const info = prepare(
        "update approvals set status = ?, resolution = ?, decided_by = ?, reason = ?, decided_at = ? where id = ? and status = 'pending'",
      ).run(decision.status, decision.resolution, decision.by, decision.reason, decision.at, id);
      return info.changes === 1;
    },
    /** Records the votes of a still pending approval; returns false once it is decided. */
    setApprovalVotes(id: string, votes: string): boolean {
      const info = prepare("update approvals set votes = ? where id = ? and status = 'pending'").run(votes, id);
      return info.changes === 1;
    },
    listApprovals(runId: string): ApprovalRow[] {
      return prepare('select * from approvals where run_id = ? order by created_at').all(runId) as ApprovalRow[];
    },

    insertEvent(row: EventRow): void {
      prepare(
        'insert into events (run_id, seq, type, data, created_at) values (@run_id, @seq, @type, @data, @created_at)',
      ).run(row);
    },
    listEvents(runId: string, after = 0, limit = 1000): EventRow[] {
      return prepare('select * from events where run_id = ? and seq > ? order by seq limit ?').all(
        runId,
        after,
        limit,
      ) as EventRow[];
    },
    lastSeq(runId: string): number {
      const row = prepare('select max(seq) as seq from events where run_id = ?').get(runId) as {
        seq: number | null;
      };
      return row.seq ?? 0;
    },

    putArtifact(row: ArtifactRow): void {
      prepare(
        'insert into artifacts (sha256, size, media_type, content, created_at) values (@sha256, @size, @media_type, @content, @created_at) on conflict (sha256) do nothing',
      ).run(row);
    },
    getArtifact(sha256: string): ArtifactRow | undefined {
      return prepare('select * from artifacts where sha256 = ?').get(sha256) as ArtifactRow | undefined;
    },

    insertMessage(row: Omit<MessageRow, 'id'>): void {
      prepare(
        'insert into messages (session_id, run_id, role, content, created_at) values (@session_id, @run_id, @role, @content, @created_at)',
      ).run(row);
    },
    listMessages(sessionId: string): MessageRow[] {
      return prepare('select * from messages where session_id = ? order by id').all(sessionId) as MessageRow[];
    },
  };
}

/**
 * The statement of `listRuns`: newest first by `(created_at, id)`, each filter an equality on an
 * index's leading columns, the cursor a row-value seek. (Exported so tests can read its plan.)
 */
export function compileListRuns(kysely: OpenDatabase['kysely'], filter: RunFilter) {
  let query = kysely.selectFrom('runs').selectAll();
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.sessionId) query = query.where('session_id', '=', filter.sessionId);
  if (filter.tenantId) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.cursor) {
    // A row-value comparison: SQLite seeks the index to the cursor instead of scanning to it.
    const [at, id] = splitCursor(filter.cursor);
    query = query.where(sql<boolean>`(created_at, id) < (${at}, ${id})`);
  }
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit ?? 50)
    .compile();
}

function splitCursor(cursor: string): [number, string] {
  const at = cursor.indexOf(':');
  return [Number(cursor.slice(0, at)), cursor.slice(at + 1)];
}
