/**
 * The SQLite store's reads: one cached statement each, answered at once (the promise is already
 * settled when it is returned).
 */
import { listRunsQuery } from './statements.js';
import type { Prepared } from './sqlite-prepared.js';
import type {
  ApprovalRow,
  ArtifactRow,
  EventRow,
  MemoryRow,
  ForkSource,
  MessageRow,
  RunRow,
  StepRow,
  StoreReads,
  ToolCallRow,
} from './store-api.js';

/** The reads of `Store` over the prepared statements. */
export function sqliteReads({ sqlite, prepare, get, all }: Prepared): StoreReads {
  return {
    getRun: async (id) => get<RunRow>('getRun', { id }),
    findRunByIdempotencyKey: async (key) => get<RunRow>('findRunByIdempotencyKey', { key }),
    activeRunOfSession: async (sessionId) => get<RunRow>('activeRunOfSession', { session_id: sessionId }),
    nextDelayedStart: async () => {
      const at = get<{ at: number | null }>('nextDelayedStart', {})?.at;
      return at === null || at === undefined ? null : Number(at);
    },
    orphanQueues: async (limit) =>
      all<{ session_id: string }>('orphanQueues', { limit, now: Date.now() }).map((r) => r.session_id),
    async listRuns(filter) {
      const { statement, args } = listRunsQuery('sqlite', filter);
      return prepare(statement).all(...args) as RunRow[];
    },
    runIdsWithStatusNotIn: async (statuses) =>
      all<{ id: string }>('runIdsWithStatusNotIn', { statuses: JSON.stringify(statuses) }).map((r) => r.id),
    orphansOfOtherAgents: async (agent, limit) =>
      all<{ id: string; agent: string }>('orphansOfOtherAgents', { agent, limit, now: Date.now() }),
    inFlightRunIds: async () => all<{ id: string }>('inFlightRunIds', {}).map((r) => r.id),
    waitingRunsPage: async (after, limit) =>
      all<RunRow>('waitingRunsPage', { after_created_at: after?.createdAt ?? -1, after_id: after?.id ?? '', limit }),
    dueWaitingRuns: async (now, after, limit, agent = null) =>
      all<{ id: string; wake_at: number }>('dueWaitingRuns', {
        now,
        after_wake_at: after?.wakeAt ?? -1,
        after_id: after?.id ?? '',
        limit,
        agent,
      }),
    nextWake: async (now, agent = null) => get<{ at: number | null }>('nextWake', { now, agent })?.at ?? null,

    listSteps: async (runId) => all<StepRow>('listSteps', { run_id: runId }),
    getToolCall: async (id) => get<ToolCallRow>('getToolCall', { id }),
    listToolCalls: async (runId) => all<ToolCallRow>('listToolCalls', { run_id: runId }),
    getApproval: async (id) => get<ApprovalRow>('getApproval', { id }),
    listApprovals: async (runId) => all<ApprovalRow>('listApprovals', { run_id: runId }),
    listEvents: async (runId, after = 0, limit = 1000) => all<EventRow>('listEvents', { run_id: runId, after, limit }),
    eventsOfType: async (runId, type) => all<EventRow>('eventsOfType', { run_id: runId, type }),
    lastSeq: async (runId) => get<{ seq: number | null }>('lastSeq', { run_id: runId })?.seq ?? 0,
    getArtifact: async (sha256) => get<ArtifactRow>('getArtifact', { sha256 }),
    listMessages: async (sessionId) => all<MessageRow>('listMessages', { session_id: sessionId }),
    memoryVersion: async () => get<{ version: number }>('memoryVersion', {})?.version ?? 0,
    readMemory: async (scopes, version) => all<MemoryRow>('readMemory', { scopes: JSON.stringify(scopes), version }),
    // One read transaction: another process's commit cannot fall between two of these reads.
    readForkSource: async (runId) =>
      sqlite
        .transaction((): ForkSource | undefined => {
          const run = get<RunRow>('getRun', { id: runId });
          if (!run) return undefined;
          const of = { run_id: runId };
          return {
            run,
            steps: all<StepRow>('listSteps', of),
            toolCalls: all<ToolCallRow>('listToolCalls', of),
            approvals: all<ApprovalRow>('listApprovals', of),
            events: all<EventRow>('listEvents', { ...of, after: 0, limit: Number.MAX_SAFE_INTEGER }),
            messages: all<MessageRow>('listMessages', { session_id: run.session_id }),
          };
        })
        .deferred(),
  };
}
