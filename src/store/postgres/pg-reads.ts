/** The PostgreSQL store's reads: one named prepared statement each, on the pool. */
import type pg from 'pg';
import { listRunsQuery } from '../statements.js';
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
} from '../store-api.js';
import { query, SQL, type PgRows } from './pg-query.js';
import type { StatementName } from '../statements.js';

/** The reads of `Store` on `pool`. */
export function pgReads(pool: pg.Pool, { rows, row }: PgRows): StoreReads {
  return {
    getRun: (id) => row<RunRow>('getRun', { id }),
    findRunByIdempotencyKey: (key) => row<RunRow>('findRunByIdempotencyKey', { key }),
    activeRunOfSession: (sessionId) => row<RunRow>('activeRunOfSession', { session_id: sessionId }),
    nextDelayedStart: async () => {
      const at = (await row<{ at: number | null }>('nextDelayedStart', {}))?.at;
      return at === null || at === undefined ? null : Number(at);
    },
    orphanQueues: async (limit) =>
      (await rows<{ session_id: string }>('orphanQueues', { limit, now: Date.now() })).map((r) => r.session_id),
    async listRuns(filter) {
      const { statement, args } = listRunsQuery('postgres', filter);
      return (await pool.query({ name: `baton_${statement.key}`, text: statement.sql, values: args })).rows as RunRow[];
    },
    async runIdsWithStatusNotIn(statuses) {
      return (await rows<{ id: string }>('runIdsWithStatusNotIn', { statuses: [...statuses] })).map((r) => r.id);
    },
    orphansOfOtherAgents: (agent, limit) =>
      rows<{ id: string; agent: string }>('orphansOfOtherAgents', { agent, limit }),
    async inFlightRunIds() {
      return (await rows<{ id: string }>('inFlightRunIds', {})).map((r) => r.id);
    },
    waitingRunsPage: (after, limit) =>
      rows<RunRow>('waitingRunsPage', { after_created_at: after?.createdAt ?? -1, after_id: after?.id ?? '', limit }),
    dueWaitingRuns: (now, after, limit, agent) =>
      rows<{ id: string; wake_at: number }>('dueWaitingRuns', {
        now,
        after_wake_at: after?.wakeAt ?? -1,
        after_id: after?.id ?? '',
        limit,
        agent: agent ?? null,
      }),
    async nextWake(now, agent) {
      return (await row<{ at: number | null }>('nextWake', { now, agent: agent ?? null }))?.at ?? null;
    },

    listSteps: (runId) => rows<StepRow>('listSteps', { run_id: runId }),
    getToolCall: (id) => row<ToolCallRow>('getToolCall', { id }),
    listToolCalls: (runId) => rows<ToolCallRow>('listToolCalls', { run_id: runId }),
    getApproval: (id) => row<ApprovalRow>('getApproval', { id }),
    listApprovals: (runId) => rows<ApprovalRow>('listApprovals', { run_id: runId }),
    listEvents: (runId, after = 0, limit = 1000) => rows<EventRow>('listEvents', { run_id: runId, after, limit }),
    async lastSeq(runId) {
      return (await row<{ seq: number | null }>('lastSeq', { run_id: runId }))?.seq ?? 0;
    },
    getArtifact: (sha256) => row<ArtifactRow>('getArtifact', { sha256 }),
    eventsOfType: (runId, type) => rows<EventRow>('eventsOfType', { run_id: runId, type }),
    async memoryVersion() {
      return (await row<{ version: number }>('memoryVersion', {}))?.version ?? 0;
    },
    readMemory: (scopes, version) => rows<MemoryRow>('readMemory', { scopes: [...scopes], version }),
    listMessages: (sessionId) => rows<MessageRow>('listMessages', { session_id: sessionId }),
    async readForkSource(runId) {
      // One snapshot for every read: a run another worker drives is seen at one instant.
      const client = await pool.connect();
      try {
        await client.query('begin isolation level repeatable read read only');
        const read = async <T>(name: StatementName, values: Record<string, unknown>) =>
          (await query(client, SQL[name], values)).rows as T[];
        const [run] = await read<RunRow>('getRun', { id: runId });
        if (!run) return undefined;
        const of = { run_id: runId };
        const source: ForkSource = {
          run,
          steps: await read<StepRow>('listSteps', of),
          toolCalls: await read<ToolCallRow>('listToolCalls', of),
          approvals: await read<ApprovalRow>('listApprovals', of),
          events: await read<EventRow>('listEvents', { ...of, after: 0, limit: Number.MAX_SAFE_INTEGER }),
          messages: await read<MessageRow>('listMessages', { session_id: run.session_id }),
        };
        return source;
      } finally {
        await client.query('commit').catch(() => undefined);
        client.release();
      }
    },
  };
}
