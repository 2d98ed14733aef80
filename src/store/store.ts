/**
 * The store on SQLite. Every statement comes from the catalog (`statements.ts`, built by Kysely)
 * and runs as a cached better-sqlite3 prepared statement: the synchronous face (`SqliteStore`)
 * is what the commit queue's units call, so the hot path never goes through an async driver.
 * `createStore` wraps it as the runtime's dialect-neutral `Store`.
 */
import type SQLite from 'better-sqlite3';
import { approvalTaken, staleFence, toWriteError, trackWriteFailures, versionConflict } from './store-errors.js';
import { createCommitQueue, type CommitQueue } from './commit-queue.js';
import { openDatabase, type OpenDatabase } from './open-database.js';
import { argsOf, catalog, listRunsQuery, type Compiled, type StatementName } from './statements.js';
import { pruneBatch, type PruneBatch, type PruneSelection } from './prune-statements.js';
import type {
  ApprovalDecision,
  ApprovalRow,
  ArtifactRow,
  EventRow,
  FeedRow,
  Fence,
  FinishedRun,
  MessageRow,
  RunFilter,
  RunProgress,
  RunRow,
  SpaceReclaimed,
  SqliteStore,
  StepRow,
  Store,
  ToolCallRow,
  UnitWriter,
} from './store-api.js';

export type * from './store-api.js';

const SQL = catalog('sqlite');

/** Opens the synchronous SQLite store on a database file (created and migrated if needed). */
export function createSqliteStore(path: string): SqliteStore {
  const db: OpenDatabase = openDatabase(path);
  const { sqlite } = db;
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (statement: Compiled): SQLite.Statement => {
    let prepared = cache.get(statement.sql);
    if (!prepared) cache.set(statement.sql, (prepared = sqlite.prepare(statement.sql)));
    return prepared;
  };
  const run = (name: StatementName, values: Record<string, unknown>) =>
    prepare(SQL[name]).run(...argsOf(SQL[name], values));
  const get = <T>(name: StatementName, values: Record<string, unknown>) =>
    prepare(SQL[name]).get(...argsOf(SQL[name], values)) as T | undefined;
  const all = <T>(name: StatementName, values: Record<string, unknown>) =>
    prepare(SQL[name]).all(...argsOf(SQL[name], values)) as T[];
  const writeFailures = trackWriteFailures();
  const queue: CommitQueue = createCommitQueue(sqlite, toWriteError, writeFailures);

  return {
    db,
    queue,
    writeFailures,
    close(): void {
      queue.flushNow();
      sqlite.close();
    },

    ensureSession(id: string, now: number): void {
      run('ensureSession', { id, now });
    },
    insertRun(row: RunRow): void {
      run('insertRun', row as unknown as Record<string, unknown>);
    },
    getRun(id: string): RunRow | undefined {
      return get<RunRow>('getRun', { id });
    },
    findRunByIdempotencyKey(key: string): RunRow | undefined {
      return get<RunRow>('findRunByIdempotencyKey', { key });
    },
    activeRunOfSession(sessionId: string): RunRow | undefined {
      return get<RunRow>('activeRunOfSession', { session_id: sessionId });
    },
    listRuns(filter: RunFilter): RunRow[] {
      const { statement, args } = listRunsQuery('sqlite', filter);
      return prepare(statement).all(...args) as RunRow[];
    },
    saveProgress(progress: RunProgress): boolean {
      return run('saveProgress', progress as unknown as Record<string, unknown>).changes === 1;
    },
    setAnswer(runId: string, answer: string): void {
      run('setAnswer', { id: runId, answer });
    },
    runIdsWithStatusNotIn(statuses: readonly string[]): string[] {
      return all<{ id: string }>('runIdsWithStatusNotIn', { statuses: JSON.stringify(statuses) }).map((r) => r.id);
    },
    orphansOfOtherAgents(agent: string, limit: number) {
      return all<{ id: string; agent: string }>('orphansOfOtherAgents', { agent, limit, now: Date.now() });
    },
    inFlightRunIds(): string[] {
      return all<{ id: string }>('inFlightRunIds', {}).map((r) => r.id);
    },
    waitingRunsPage(after: { createdAt: number; id: string } | null, limit: number): RunRow[] {
      return all<RunRow>('waitingRunsPage', {
        after_created_at: after?.createdAt ?? -1,
        after_id: after?.id ?? '',
        limit,
      });
    },
    dueWaitingRuns(now: number, after: { wakeAt: number; id: string } | null, limit: number, agent = null) {
      return all<{ id: string; wake_at: number }>('dueWaitingRuns', {
        now,
        after_wake_at: after?.wakeAt ?? -1,
        after_id: after?.id ?? '',
        limit,
        agent,
      });
    },
    nextWake(now: number, agent: string | null = null): number | null {
      return get<{ at: number | null }>('nextWake', { now, agent })?.at ?? null;
    },
    setWakeAt(id: string, at: number | null): void {
      run('setWakeAt', { id, at });
    },
    claimRun(id: string, owner: string, leaseMs: number, isDead: (owner: string) => boolean) {
      const now = Date.now();
      // `all`, not `get`: an UPDATE … RETURNING commits when it is stepped to its end, and only
      // then does a refused commit (a full disk) throw; `get` stops at the first row and the
      // failed commit would go unseen, a claim reported that the file does not hold.
      const claimed = all<{ epoch: number }>('claimRun', { id, owner, lease_ms: leaseMs, now })[0];
      if (claimed) return claimed.epoch;
      // Held by another owner: taken over only if that owner is known to be gone.
      const lease = get<{ owner: string | null }>('leaseOf', { id });
      if (!lease?.owner || !isDead(lease.owner)) return null;
      const taken = all<{ epoch: number }>('takeLease', {
        id,
        owner,
        lease_ms: leaseMs,
        now,
        previous: lease.owner,
      })[0];
      return taken?.epoch ?? null;
    },
    claimRuns(owner: string, leaseMs: number, limit: number, agent: string | null = null) {
      return all<{ id: string; epoch: number }>('claimRuns', {
        owner,
        lease_ms: leaseMs,
        limit,
        now: Date.now(),
        agent,
      });
    },
    inFlightOwners(): string[] {
      return all<{ owner: string }>('inFlightOwners', {}).map((r) => r.owner);
    },
    claimRunsOf(dead: string, owner: string, leaseMs: number, limit: number, agent: string | null = null) {
      return all<{ id: string; epoch: number }>('claimRunsOf', {
        dead,
        owner,
        lease_ms: leaseMs,
        limit,
        now: Date.now(),
        agent,
      });
    },
    renewLeases(owner: string, leaseMs: number, ids: readonly string[]) {
      // Only the runs this runtime drives, looked up by id.
      return all<{ id: string; cancel_requested: string | null }>('renewLeases', {
        owner,
        lease_ms: leaseMs,
        now: Date.now(),
        ids: JSON.stringify(ids),
      });
    },
    requestCancel(id: string, request: string): boolean {
      return run('requestCancel', { id, request }).changes === 1;
    },
    releaseLease(id: string, owner: string, epoch?: number): void {
      run('releaseLease', { id, owner, epoch: epoch ?? -1 });
    },
    releaseLeases(owner: string): void {
      run('releaseLeases', { owner });
    },
    holdsRun(fence: Fence): boolean {
      return get<{ id: string }>('holdsRun', { id: fence.runId, owner: fence.owner, epoch: fence.epoch }) !== undefined;
    },

    insertStep(row: StepRow): void {
      run('insertStep', row as unknown as Record<string, unknown>);
    },
    listSteps(runId: string): StepRow[] {
      return all<StepRow>('listSteps', { run_id: runId });
    },
    getToolCall(id: string): ToolCallRow | undefined {
      return get<ToolCallRow>('getToolCall', { id });
    },
    putToolCall(row: ToolCallRow): void {
      run('putToolCall', row as unknown as Record<string, unknown>);
    },
    listToolCalls(runId: string): ToolCallRow[] {
      return all<ToolCallRow>('listToolCalls', { run_id: runId });
    },

    insertApproval(row: ApprovalRow): void {
      run('insertApproval', row as unknown as Record<string, unknown>);
    },
    getApproval(id: string): ApprovalRow | undefined {
      return get<ApprovalRow>('getApproval', { id });
    },
    decideApproval(id: string, decision: ApprovalDecision): boolean {
      return run('decideApproval', { id, ...decision }).changes === 1;
    },
    setApprovalVotes(id: string, votes: string): boolean {
      return run('setApprovalVotes', { id, votes }).changes === 1;
    },
    listApprovals(runId: string): ApprovalRow[] {
      return all<ApprovalRow>('listApprovals', { run_id: runId });
    },

    insertEvent(row: EventRow): void {
      run('insertEvent', row as unknown as Record<string, unknown>);
    },
    listEvents(runId: string, after = 0, limit = 1000): EventRow[] {
      return all<EventRow>('listEvents', { run_id: runId, after, limit });
    },
    eventsOfType(runId: string, type: string): EventRow[] {
      return all<EventRow>('eventsOfType', { run_id: runId, type });
    },
    lastSeq(runId: string): number {
      return get<{ seq: number | null }>('lastSeq', { run_id: runId })?.seq ?? 0;
    },

    putArtifact(row: ArtifactRow, runId: string): void {
      run('putArtifact', row as unknown as Record<string, unknown>);
      run('putArtifactRef', { sha256: row.sha256, run_id: runId });
    },
    getArtifact(sha256: string): ArtifactRow | undefined {
      return get<ArtifactRow>('getArtifact', { sha256 });
    },

    insertMessage(row: Omit<MessageRow, 'id'>): void {
      run('insertMessage', row);
    },
    listMessages(sessionId: string): MessageRow[] {
      return all<MessageRow>('listMessages', { session_id: sessionId });
    },
    readFeed(after: number, limit: number, tenantId: string | null): FeedRow[] {
      if (tenantId === null) return all<FeedRow>('readFeed', { after, limit });
      return all<FeedRow>('readFeedOfTenant', { after, limit, tenant_id: tenantId });
    },
    feedHead(): number {
      return get<{ position: number | null }>('feedHead', {})?.position ?? 0;
    },
    sharedSecret(name: string, candidate: string): string {
      run('putSecret', { name, value: candidate, created_at: Date.now() });
      return get<{ value: string }>('getSecret', { name })?.value ?? candidate;
    },
    pruneBatch(selection: PruneSelection): PruneBatch {
      const steps = pruneBatch('sqlite', selection);
      let next = steps.next();
      while (!next.done) {
        const statement = SQL[next.value.name];
        const prepared = prepare(statement);
        const args = argsOf(statement, next.value.values);
        next = steps.next(
          prepared.reader
            ? { rows: prepared.all(...args) as Record<string, unknown>[], count: 0 }
            : { rows: [], count: prepared.run(...args).changes },
        );
      }
      return next.value;
    },
    newestFinished(status: string, limit: number): FinishedRun[] {
      return all<FinishedRun>('newestFinished', { status, limit });
    },
    artifactRefsOf(sha256s: readonly string[]) {
      return all<{ sha256: string; run_id: string; size: number }>('artifactRefsOf', { ids: JSON.stringify(sha256s) });
    },
    runsOfSessions(sessionIds: readonly string[]) {
      return all<{ id: string; session_id: string }>('runsOfSessions', { ids: JSON.stringify(sessionIds) });
    },
    reclaimSpace(maxPages: number): SpaceReclaimed {
      const pageSize = Number(sqlite.pragma('page_size', { simple: true }));
      const before = Number(sqlite.pragma('freelist_count', { simple: true }));
      // Only a file created with incremental auto-vacuum can give pages back (see open-database.ts).
      if (before > 0 && Number(sqlite.pragma('auto_vacuum', { simple: true })) === 2) {
        sqlite.pragma(`incremental_vacuum(${Math.max(1, Math.trunc(maxPages))})`);
      }
      const after = Number(sqlite.pragma('freelist_count', { simple: true }));
      return { freed_pages: before - after, free_pages: after, page_size: pageSize };
    },
  };
}

/**
 * The unit writer over the synchronous store: each write runs at once, conditions checked. A
 * fenced unit checks first, in its transaction, that its runtime still holds the run at the
 * epoch it claimed it with (as PostgreSQL's fenced unit does), so a runtime that lost its lease
 * writes nothing, not even a `started` row; a new run's unit inserts the row it is fenced on.
 */
function sqliteWriter(store: SqliteStore) {
  /** The fence of the unit being written, until it is checked (units run one at a time). */
  let unchecked: Fence | null = null;
  const fenced = (): void => {
    const fence = unchecked;
    if (fence === null) return;
    unchecked = null;
    if (!store.holdsRun(fence)) throw staleFence(fence);
  };
  const writer: UnitWriter = {
    ensureSession(id, now) {
      unchecked = null;
      store.ensureSession(id, now);
    },
    insertRun(row) {
      unchecked = null;
      store.insertRun(row);
    },
    saveProgress(progress) {
      fenced();
      if (!store.saveProgress(progress)) throw versionConflict(progress.id);
    },
    setAnswer(runId, answer) {
      fenced();
      store.setAnswer(runId, answer);
    },
    setWakeAt(id, at) {
      fenced();
      store.setWakeAt(id, at);
    },
    insertStep(row) {
      fenced();
      store.insertStep(row);
    },
    putToolCall(row) {
      fenced();
      store.putToolCall(row);
    },
    insertApproval(row) {
      fenced();
      store.insertApproval(row);
    },
    decideApproval(id, decision) {
      fenced();
      if (!store.decideApproval(id, decision)) throw approvalTaken(id);
    },
    setApprovalVotes(id, votes) {
      fenced();
      if (!store.setApprovalVotes(id, votes)) throw approvalTaken(id);
    },
    insertEvent(row) {
      fenced();
      store.insertEvent(row);
    },
    putArtifact(row, runId) {
      fenced();
      store.putArtifact(row, runId);
    },
    insertMessage(row) {
      fenced();
      store.insertMessage(row);
    },
  };
  return {
    /** Runs `work` as one unit under `fence` (checked before its first write). */
    unit<T>(work: (writer: UnitWriter) => T, fence: Fence | undefined): T {
      unchecked = fence ?? null;
      try {
        return work(writer);
      } finally {
        unchecked = null;
      }
    },
  };
}

/** The runtime's store on SQLite: the synchronous store behind the dialect-neutral interface. */
export function sqliteRunStore(store: SqliteStore): Store {
  const writer = sqliteWriter(store);
  /** Runs a write made outside the commit queue; a database that refused it throws `store.write_failed`. */
  const writing = <T>(write: () => T): T => {
    try {
      return write();
    } catch (error) {
      const failed = toWriteError(error);
      store.writeFailures.failed(failed);
      throw failed;
    }
  };
  return {
    dialect: 'sqlite',
    // The same fence as PostgreSQL's: the owner and epoch, checked inside the unit's savepoint.
    write: (work, fence) => store.queue.write(() => writer.unit(work, fence)),
    get commits() {
      return store.queue.commits;
    },
    get writeFailure() {
      return store.writeFailures.current;
    },
    listen: () => () => undefined,
    async close() {
      store.close();
    },
    getRun: async (id) => store.getRun(id),
    findRunByIdempotencyKey: async (key) => store.findRunByIdempotencyKey(key),
    activeRunOfSession: async (sessionId) => store.activeRunOfSession(sessionId),
    listRuns: async (filter) => store.listRuns(filter),
    runIdsWithStatusNotIn: async (statuses) => store.runIdsWithStatusNotIn(statuses),
    inFlightRunIds: async () => store.inFlightRunIds(),
    orphansOfOtherAgents: async (agent, limit) => store.orphansOfOtherAgents(agent, limit),
    waitingRunsPage: async (after, limit) => store.waitingRunsPage(after, limit),
    dueWaitingRuns: async (now, after, limit, agent) => store.dueWaitingRuns(now, after, limit, agent),
    nextWake: async (now, agent) => store.nextWake(now, agent),
    // Writes outside the commit queue (leases, cancel requests) fail as the queue's do.
    claimRun: async (id, owner, leaseMs, isDead) => writing(() => store.claimRun(id, owner, leaseMs, isDead)),
    claimRuns: async (owner, leaseMs, limit, agent) => writing(() => store.claimRuns(owner, leaseMs, limit, agent)),
    inFlightOwners: async () => store.inFlightOwners(),
    claimRunsOf: async (dead, owner, leaseMs, limit, agent) =>
      writing(() => store.claimRunsOf(dead, owner, leaseMs, limit, agent)),
    renewLeases: async (owner, leaseMs, ids) => writing(() => store.renewLeases(owner, leaseMs, ids)),
    requestCancel: async (id, request) => writing(() => store.requestCancel(id, request)),
    releaseLease: async (id, owner, epoch) => writing(() => store.releaseLease(id, owner, epoch)),
    releaseLeases: async (owner) => writing(() => store.releaseLeases(owner)),
    listSteps: async (runId) => store.listSteps(runId),
    getToolCall: async (id) => store.getToolCall(id),
    listToolCalls: async (runId) => store.listToolCalls(runId),
    getApproval: async (id) => store.getApproval(id),
    listApprovals: async (runId) => store.listApprovals(runId),
    listEvents: async (runId, after, limit) => store.listEvents(runId, after, limit),
    lastSeq: async (runId) => store.lastSeq(runId),
    eventsOfType: async (runId, type) => store.eventsOfType(runId, type),
    getArtifact: async (sha256) => store.getArtifact(sha256),
    listMessages: async (sessionId) => store.listMessages(sessionId),
    readFeed: async (after, limit, tenantId) => store.readFeed(after, limit, tenantId),
    feedHead: async () => store.feedHead(),
    // Outside the commit queue, like a lease: one small write, once per process.
    sharedSecret: async (name, candidate) => writing(() => store.sharedSecret(name, candidate)),
    // A batch is a unit of the commit queue: live writers wait for at most one batch.
    pruneBatch: async (selection) =>
      selection.dryRun ? store.pruneBatch(selection) : store.queue.write(() => store.pruneBatch(selection)),
    newestFinished: async (status, limit) => store.newestFinished(status, limit),
    artifactRefsOf: async (sha256s) => store.artifactRefsOf(sha256s),
    runsOfSessions: async (sessionIds) => store.runsOfSessions(sessionIds),
    reclaimSpace: (maxPages) => store.queue.write(() => store.reclaimSpace(maxPages)),
  };
}
