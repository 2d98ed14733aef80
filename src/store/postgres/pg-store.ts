/**
 * The store on PostgreSQL: the same statements as SQLite's (`../statements.ts`, compiled for
 * Postgres), run as named prepared statements through a `pg` pool. A unit of work records its
 * writes synchronously and runs them as one transaction when it commits: first the fence (the
 * run's row locked only if this owner still holds it at the claimed epoch), then the writes,
 * each conditional one checked. A run's units commit one after another, in the order they were
 * queued; units of different runs commit concurrently over the pool.
 */
import pg from 'pg';
import { BatonError, createFailure } from '../../failure.js';
import {
  approvalTaken,
  staleFence,
  toWriteError,
  trackWriteFailures,
  versionConflict,
  writeFailureCause,
} from '../store-errors.js';
import { argsOf, catalog, listRunsQuery, type Compiled, type StatementName } from '../statements.js';
import type {
  ApprovalRow,
  ArtifactRow,
  Claim,
  EventRow,
  FeedRow,
  Fence,
  FinishedRun,
  MessageRow,
  RunRow,
  StepRow,
  Store,
  StoreNote,
  ToolCallRow,
  UnitWriter,
} from '../store-api.js';
import { pruneBatch } from '../prune-statements.js';
import { fencedUnit } from './fenced-unit.js';
import { openPostgres, type OpenPostgres } from './open-postgres.js';

const SQL = catalog('postgres');

type Queryable = pg.Pool | pg.PoolClient;

/** One recorded write of a unit: a statement, its values, and what must hold after it ran. */
interface Op {
  name: StatementName;
  values: Record<string, unknown>;
  /** Throws when the write changed no row but had to (a compare-and-set lost). */
  check?: (rowCount: number) => void;
}

/** Channels Baton notifies on after commits: runs that need driving, and committed events. */
const RUNS_CHANNEL = 'baton_runs';
const EVENTS_CHANNEL = 'baton_events';
const CANCEL_CHANNEL = 'baton_cancel';

/** Arbitrary, fixed (next to the migration lock's): held while a reader gives feed rows their positions. */
const FEED_LOCK = 7_261_432_119;

/**
 * Gives the feed rows committed so far their positions, after the highest one, in insertion
 * order. Under the lock, and in a statement that starts once the lock is held, so each placing
 * sees every row an earlier placing did and puts the rows it finds after them: a reader that
 * saw position p can find new rows only above p. Rows still being written are invisible here
 * and get placed by a later call.
 */
const PLACE_FEED =
  `begin; select pg_advisory_xact_lock(${FEED_LOCK}); ` +
  'with unplaced as (select id, row_number() over (order by id) as n from event_feed where position is null), ' +
  'head as (select coalesce(max(position), 0) as p from event_feed) ' +
  'update event_feed f set position = head.p + unplaced.n from unplaced, head where f.id = unplaced.id; commit';

/**
 * The notifications a unit sends on commit (NOTIFY inside a transaction is delivered when it
 * commits): its events' range per run, and whether it made a run claimable (a new run, a
 * decision that makes a waiting run due).
 */
function notesOf(ops: readonly Op[]): [string, string][] {
  const notes: [string, string][] = [];
  const ranges = new Map<string, [number, number]>();
  for (const op of ops) {
    if (op.name === 'insertEvent') {
      const runId = op.values.run_id as string;
      const seq = op.values.seq as number;
      const range = ranges.get(runId);
      ranges.set(runId, range ? [Math.min(range[0], seq), Math.max(range[1], seq)] : [seq, seq]);
    }
  }
  // With the status the unit leaves the run in, so a waiter elsewhere needs no read.
  const saved = ops.find((op) => op.name === 'saveProgress');
  for (const [runId, [from, to]] of ranges) {
    const status = saved?.values.id === runId ? ` ${String(saved.values.status)}` : '';
    notes.push([EVENTS_CHANNEL, `${runId} ${from} ${to}${status}`]);
  }
  if (ops.some((op) => op.name === 'insertRun' || (op.name === 'setWakeAt' && op.values.at === 0))) {
    notes.push([RUNS_CHANNEL, '']);
  }
  return notes;
}

function parseNote(channel: string, payload: string | undefined): StoreNote | null {
  if (channel === RUNS_CHANNEL) return { kind: 'runs' };
  if (channel === CANCEL_CHANNEL) return payload ? { kind: 'cancel', runId: payload } : null;
  if (channel !== EVENTS_CHANNEL || !payload) return null;
  const [runId, from, to, status] = payload.split(' ');
  if (!runId || !from || !to) return null;
  return { kind: 'events', runId, from: Number(from), to: Number(to), status: status ?? null };
}

function query(db: Queryable, statement: Compiled, values: Record<string, unknown>) {
  return db.query({ name: `baton_${statement.key}`, text: statement.sql, values: argsOf(statement, values) });
}

const fenced = staleFence;

/** A statement that only reads. */
const READ = /^\s*select\b/i;

/** The connection a statement ran on was ended under it (not a refusal of the statement itself). */
function connectionLost(error: unknown): boolean {
  const cause = writeFailureCause(error);
  return (
    cause !== null &&
    (cause.startsWith('57P') ||
      cause.startsWith('08') ||
      ['connection_terminated', 'ECONNRESET', 'EPIPE'].includes(cause))
  );
}

/** The store's writes made outside a unit of work. */
const DIRECT_WRITES = [
  'claimRun',
  'claimRuns',
  'claimRunsOf',
  'renewLeases',
  'requestCancel',
  'releaseLease',
  'releaseLeases',
  'pruneBatch',
  'reclaimSpace',
] as const satisfies readonly (keyof Store)[];

/** Records a unit's writes. */
function recorder(ops: Op[]): UnitWriter {
  const push = (name: StatementName, values: object, check?: Op['check']) =>
    ops.push({ name, values: values as Record<string, unknown>, ...(check ? { check } : {}) });
  return {
    ensureSession: (id, now) => push('ensureSession', { id, now }),
    insertRun: (row) => push('insertRun', row),
    saveProgress: (progress) =>
      push('saveProgress', progress, (count) => {
        if (count !== 1) throw versionConflict(progress.id);
      }),
    setAnswer: (runId, answer) => push('setAnswer', { id: runId, answer }),
    setWakeAt: (id, at) => push('setWakeAt', { id, at }),
    insertStep: (row) => push('insertStep', row),
    putToolCall: (row) => push('putToolCall', row),
    insertApproval: (row) => push('insertApproval', row),
    decideApproval: (id, decision) =>
      push('decideApproval', { id, ...decision }, (count) => {
        if (count !== 1) throw approvalTaken(id);
      }),
    setApprovalVotes: (id, votes) =>
      push('setApprovalVotes', { id, votes }, (count) => {
        if (count !== 1) throw approvalTaken(id);
      }),
    insertEvent: (row) => push('insertEvent', row),
    putArtifact: (row, runId) => {
      push('putArtifact', row);
      push('putArtifactRef', { sha256: row.sha256, run_id: runId });
    },
    insertMessage: (row) => push('insertMessage', row),
  };
}

/** Opens the store on the PostgreSQL database at `url` (migrated if needed). */
export async function createPostgresStore(url: string, options: { poolSize?: number } = {}): Promise<Store> {
  const opened: OpenPostgres = await openPostgres(url, { max: options.poolSize ?? 10 });
  const pool = opened.pool;
  let commits = 0;
  let closed = false;
  const writeFailures = trackWriteFailures();
  /** The last unit queued per run: the next one commits after it. */
  const tails = new Map<string, Promise<unknown>>();
  const pending = new Set<Promise<unknown>>();

  const rows = async <T>(name: StatementName, values: Record<string, unknown>): Promise<T[]> => {
    const statement = SQL[name];
    try {
      return (await query(pool, statement, values)).rows as T[];
    } catch (error) {
      // A read that met a connection the server had just ended (a restart, an administrator) is
      // asked again once, on a fresh one: it changes nothing, and the pool has dropped the dead one.
      if (!READ.test(statement.sql) || !connectionLost(error)) throw error;
      return (await query(pool, statement, values)).rows as T[];
    }
  };
  async function placeFeed(): Promise<void> {
    const unplaced = await pool.query('select 1 from event_feed where position is null limit 1');
    if (unplaced.rowCount === 0) return;
    const client = await pool.connect();
    try {
      await client.query(PLACE_FEED);
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  const row = async <T>(name: StatementName, values: Record<string, unknown>): Promise<T | undefined> =>
    (await rows<T>(name, values))[0];

  async function commit<T>(work: (writer: UnitWriter) => T, fence: Fence | undefined): Promise<T> {
    const ops: Op[] = [];
    const result = work(recorder(ops));
    if (ops.length === 0) return result;
    // The common unit (a snapshot, its events, ledger rows): one fenced statement, one round trip.
    const fast = fence ? fencedUnit(ops, fence, notesOf(ops)) : null;
    if (fast && fence) {
      const {
        rows: [counts],
      } = await pool.query<{ fenced: number; saved?: number }>({
        name: fast.name,
        text: fast.text,
        values: fast.values,
      });
      if (counts?.fenced !== 1) throw fenced(fence);
      if (fast.saves && counts.saved !== 1) throw versionConflict(fence.runId);
      commits += 1;
      return result;
    }
    const client = await pool.connect();
    const literal = (value: string) => client.escapeLiteral(value);
    try {
      // Fewer round trips: BEGIN goes with the fence, the notifications with COMMIT, each pair
      // one simple query (values escaped as literals); the writes are prepared statements.
      // A new run's unit inserts the row it would be fenced on.
      if (fence && ops[0]?.name !== 'ensureSession' && ops[0]?.name !== 'insertRun') {
        const results = (await client.query(
          `begin; select id from runs where id = ${literal(fence.runId)} and owner = ${literal(fence.owner)} and epoch = ${Math.trunc(fence.epoch)} for update`,
        )) as unknown as pg.QueryResult[];
        if (results[1]?.rowCount !== 1) throw fenced(fence);
      } else {
        await client.query('begin');
      }
      for (const op of ops) {
        const done = await query(client, SQL[op.name], op.values);
        op.check?.(done.rowCount ?? 0);
      }
      const notes = notesOf(ops);
      const notify = notes.map(([channel, payload]) => `select pg_notify(${literal(channel)}, ${literal(payload)}); `);
      await client.query(`${notify.join('')}commit`);
      commits += 1;
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  const listeners = new Set<(note: StoreNote) => void>();
  let listening: pg.Client | null = null;
  let reconnect: NodeJS.Timeout | undefined;

  /** One connection LISTENs for every listener of this store; re-established if it drops. */
  async function startListening(): Promise<void> {
    if (closed || listening || listeners.size === 0) return;
    const client = new pg.Client({ connectionString: url });
    listening = client;
    const retry = () => {
      if (listening !== client) return;
      listening = null;
      client.end().catch(() => undefined);
      if (closed || listeners.size === 0) return;
      clearTimeout(reconnect);
      reconnect = setTimeout(() => {
        void startListening().then(() => {
          // Whatever was sent while no one listened is found by polling: say so.
          for (const listener of listeners) listener({ kind: 'reconnected' });
        });
      }, 500);
      reconnect.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (message) => {
      const note = parseNote(message.channel, message.payload);
      if (note) for (const listener of listeners) listener(note);
    });
    try {
      await client.connect();
      await client.query(`listen ${RUNS_CHANNEL}`);
      await client.query(`listen ${EVENTS_CHANNEL}`);
      await client.query(`listen ${CANCEL_CHANNEL}`);
    } catch {
      retry();
    }
  }

  const store: Store = {
    dialect: 'postgres',
    listen(listener) {
      listeners.add(listener);
      void startListening();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && listening) {
          const client = listening;
          listening = null;
          void client.end().catch(() => undefined);
        }
      };
    },
    write<T>(work: (writer: UnitWriter) => T, fence?: Fence): Promise<T> {
      if (closed) return Promise.reject(new BatonError(createFailure('run.closed', 'The store is closed')));
      const key = fence?.runId ?? '';
      const previous = tails.get(key) ?? Promise.resolve();
      // After the run's previous unit, and on a later turn, so a burst of transitions is one unit.
      const unit = previous
        .catch(() => undefined)
        .then(() => new Promise((resolve) => setImmediate(resolve)))
        .then(() =>
          commit(work, fence).then(
            (value) => {
              writeFailures.committed();
              return value;
            },
            (error: unknown) => {
              const failed = toWriteError(error);
              writeFailures.failed(failed);
              throw failed;
            },
          ),
        );
      tails.set(key, unit);
      pending.add(unit);
      void unit
        .catch(() => undefined)
        .finally(() => {
          pending.delete(unit);
          if (tails.get(key) === unit) tails.delete(key);
        });
      return unit;
    },
    get commits() {
      return commits;
    },
    get writeFailure() {
      return writeFailures.current;
    },
    async close() {
      closed = true;
      clearTimeout(reconnect);
      const client = listening;
      listening = null;
      await client?.end().catch(() => undefined);
      await Promise.allSettled([...pending]);
      await opened.close();
    },

    getRun: (id) => row<RunRow>('getRun', { id }),
    findRunByIdempotencyKey: (key) => row<RunRow>('findRunByIdempotencyKey', { key }),
    activeRunOfSession: (sessionId) => row<RunRow>('activeRunOfSession', { session_id: sessionId }),
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

    async claimRun(id, owner, leaseMs, isDead) {
      const claimed = await row<{ epoch: number }>('claimRun', { id, owner, lease_ms: leaseMs });
      if (claimed) return claimed.epoch;
      const lease = await row<{ owner: string | null }>('leaseOf', { id });
      if (!lease?.owner || !isDead(lease.owner)) return null;
      const taken = await row<{ epoch: number }>('takeLease', { id, owner, lease_ms: leaseMs, previous: lease.owner });
      return taken?.epoch ?? null;
    },
    claimRuns: (owner, leaseMs, limit, agent) =>
      rows<Claim>('claimRuns', { owner, lease_ms: leaseMs, limit, agent: agent ?? null }),
    async inFlightOwners() {
      return (await rows<{ owner: string }>('inFlightOwners', {})).map((r) => r.owner);
    },
    claimRunsOf: (dead, owner, leaseMs, limit, agent) =>
      rows<Claim>('claimRunsOf', { dead, owner, lease_ms: leaseMs, limit, agent: agent ?? null }),
    async renewLeases(owner, leaseMs, ids) {
      if (ids.length === 0) return [];
      return rows<{ id: string; cancel_requested: string | null }>('renewLeases', {
        owner,
        lease_ms: leaseMs,
        ids: [...ids],
      });
    },
    async requestCancel(id, request) {
      const done = await query(pool, SQL.requestCancel, { id, request });
      if (done.rowCount !== 1) return false;
      // The runtime that drives the run hears it now rather than at its next renewal.
      await pool.query('select pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
      return true;
    },
    async releaseLease(id, owner, epoch) {
      await query(pool, SQL.releaseLease, { id, owner, epoch: epoch ?? -1 });
      // Free for a worker to claim: tell them now rather than at their next poll.
      await pool.query('select pg_notify($1, $2)', [RUNS_CHANNEL, '']);
    },
    async releaseLeases(owner) {
      await query(pool, SQL.releaseLeases, { owner });
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
    listMessages: (sessionId) => rows<MessageRow>('listMessages', { session_id: sessionId }),
    async readFeed(after, limit, tenantId) {
      await placeFeed();
      if (tenantId === null) return rows<FeedRow>('readFeed', { after, limit });
      return rows<FeedRow>('readFeedOfTenant', { after, limit, tenant_id: tenantId });
    },
    async feedHead() {
      // Rows not placed yet will be placed above it: starting from it misses none of them.
      return (await row<{ position: number | null }>('feedHead', {}))?.position ?? 0;
    },
    async sharedSecret(name, candidate) {
      await query(pool, SQL.putSecret, { name, value: candidate, created_at: Date.now() });
      return (await row<{ value: string }>('getSecret', { name }))?.value ?? candidate;
    },
    async pruneBatch(selection) {
      if (closed) throw new BatonError(createFailure('run.closed', 'The store is closed'));
      const client = await pool.connect();
      try {
        if (!selection.dryRun) await client.query('begin');
        const steps = pruneBatch('postgres', selection);
        let next = steps.next();
        while (!next.done) {
          const done = await query(client, SQL[next.value.name], next.value.values);
          next = steps.next({ rows: done.rows as Record<string, unknown>[], count: done.rowCount ?? 0 });
        }
        if (!selection.dryRun) await client.query('commit');
        return next.value;
      } catch (error) {
        if (!selection.dryRun) await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    newestFinished: (status, limit) => rows<FinishedRun>('newestFinished', { status, limit }),
    artifactRefsOf: (sha256s) =>
      rows<{ sha256: string; run_id: string; size: number }>('artifactRefsOf', { ids: [...sha256s] }),
    runsOfSessions: (sessionIds) =>
      rows<{ id: string; session_id: string }>('runsOfSessions', { ids: [...sessionIds] }),
    // Deleted rows' space is reused by PostgreSQL once autovacuum has seen them; nothing to give back here.
    reclaimSpace: async () => ({ freed_pages: 0, free_pages: 0, page_size: 8192 }),
  };
  // Writes outside a unit (leases, cancel requests, prune batches) fail as a unit's do.
  for (const name of DIRECT_WRITES) {
    const write = store[name] as (...args: unknown[]) => Promise<unknown>;
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
      write(...args).catch((error: unknown) => {
        const failed = toWriteError(error);
        writeFailures.failed(failed);
        throw failed;
      });
  }
  return store;
}
