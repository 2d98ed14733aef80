/**
 * Retention: deleting finished runs a batch at a time. A batch is chosen by when its runs
 * finished (the `runs_finished` index, a cursor seek) and is written as one unit: the runs'
 * events, steps, ledger rows, approvals, session history and artifact references, then the runs,
 * then the artifacts no remaining run references and the sessions left without runs.
 *
 * Never touched: a run that is not finished (the delete re-checks the status in the same
 * transaction, and a finished run never becomes active again: the unit that made it finished
 * was its last), and a run whose session has an active run (that run's planner reads the
 * session's history). A child run (an agent called as a tool) is kept while its parent is, and
 * goes with it: a batch takes the finished children of its runs, theirs too; a run with a child
 * still active is kept.
 */
import { DEFAULTS } from '../defaults.js';
import { sql } from 'kysely';
import { ACTIVE, FINISHED, FINISHED_TERM, idIn, idList, noActiveRunIn, type Build, type Dialect } from './compile.js';

export const PRUNE_BUILDS = {
  /** The newest finished runs of a status, newest first (the runs `keepLast` keeps). */
  newestFinished: (db, p) =>
    db
      .selectFrom('runs')
      .select(['id', 'updated_at'])
      .where(FINISHED_TERM)
      .where('status', '=', p('status'))
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(p('limit')),
  /** The next batch of a status, oldest finish first, between the cursor and the bound. */
  pruneCandidates: (db, p) =>
    db
      .selectFrom('runs')
      .select(['id', 'session_id', 'updated_at'])
      .where(FINISHED_TERM)
      .where('status', '=', p('status'))
      .where(sql<boolean>`(updated_at, id) > (${p('after_at')}, ${p('after_id')})`)
      .where(sql<boolean>`(updated_at, id) < (${p('before_at')}, ${p('before_id')})`)
      .where(noActiveRunIn(sql.ref('runs.session_id')))
      // A child goes with its parent, never before it.
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs as parent')
              .select(sql`1`.as('one'))
              .whereRef('parent.id', '=', 'runs.parent_run_id'),
          ),
        ),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs as child')
              .select(sql`1`.as('one'))
              .whereRef('child.parent_run_id', '=', 'runs.id')
              .where('child.status', 'in', ACTIVE),
          ),
        ),
      )
      .orderBy('updated_at')
      .orderBy('id')
      .limit(p('limit')),
  /** The finished children of the given runs (they go with their parents). */
  finishedChildren: (db, p, dialect) =>
    db
      .selectFrom('runs')
      .select(['id', 'session_id', 'updated_at'])
      .where('parent_run_id', 'in', idIn(p, dialect))
      .where('status', 'in', FINISHED),
  /**
   * Holds the batch's sessions until the unit commits (PostgreSQL): a run starting in one of
   * them waits, so it never reads a history this unit is deleting. SQLite's writer is alone.
   */
  lockSessions: (db, p, dialect) => {
    const query = db.selectFrom('sessions').select('id').where('id', 'in', idIn(p, dialect)).orderBy('id');
    return dialect === 'postgres' ? query.forUpdate() : query;
  },
  /** Whether a session has an active run, read again after the lock. */
  activeSessions: (db, p, dialect) =>
    db
      .selectFrom('runs')
      .select('session_id')
      .distinct()
      .where('session_id', 'in', idIn(p, dialect))
      .where('status', 'in', ACTIVE),
  batchArtifacts: (db, p, dialect) =>
    db.selectFrom('artifact_refs').select('sha256').distinct().where('run_id', 'in', idIn(p, dialect)),
  countOfBatch: (db, p, dialect) => {
    const count = (table: 'events' | 'steps' | 'tool_calls' | 'approvals' | 'messages') =>
      db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('run_id', 'in', idIn(p, dialect));
    return db
      .selectNoFrom([
        count('events').as('events'),
        count('steps').as('steps'),
        count('tool_calls').as('tool_calls'),
        count('approvals').as('approvals'),
        count('messages').as('messages'),
      ])
      .$castTo<Record<string, number>>();
  },
  /** SQLite: the feed's floor raised to the highest position of the events about to go, so none is given again. */
  raiseFeedFloor: (db, p, dialect) =>
    db
      .updateTable('feed_floor')
      .set({
        position: sql<number>`max(position, coalesce((select max(position) from events where run_id in ${idIn(p, dialect)} and position is not null), 0))`,
      })
      .where('id', '=', 1),
  deleteEvents: (db, p, dialect) => db.deleteFrom('events').where('run_id', 'in', idIn(p, dialect)),
  deleteSteps: (db, p, dialect) => db.deleteFrom('steps').where('run_id', 'in', idIn(p, dialect)),
  deleteToolCalls: (db, p, dialect) => db.deleteFrom('tool_calls').where('run_id', 'in', idIn(p, dialect)),
  deleteApprovals: (db, p, dialect) => db.deleteFrom('approvals').where('run_id', 'in', idIn(p, dialect)),
  deleteLabels: (db, p, dialect) => db.deleteFrom('run_labels').where('run_id', 'in', idIn(p, dialect)),
  deleteMessages: (db, p, dialect) => db.deleteFrom('messages').where('run_id', 'in', idIn(p, dialect)),
  deleteArtifactRefs: (db, p, dialect) => db.deleteFrom('artifact_refs').where('run_id', 'in', idIn(p, dialect)),
  deleteRuns: (db, p, dialect) =>
    db.deleteFrom('runs').where('id', 'in', idIn(p, dialect)).where('status', 'in', FINISHED),
  /** Of the given artifacts, those no run references any more; their sizes. */
  deleteOrphanArtifacts: (db, p, dialect) =>
    db
      .deleteFrom('artifacts')
      .where('sha256', 'in', idIn(p, dialect))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('artifact_refs')
              .select(sql`1`.as('one'))
              .whereRef('artifact_refs.sha256', '=', 'artifacts.sha256'),
          ),
        ),
      )
      .returning('size'),
  /**
   * The history of sessions left without runs that belongs to no run: a fork's copy of its
   * source's session history (copied without the runs it came from), which goes with the fork.
   */
  deleteRunlessHistory: (db, p, dialect) =>
    db
      .deleteFrom('messages')
      .where('session_id', 'in', idIn(p, dialect))
      .where('run_id', 'is', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs')
              .select(sql`1`.as('one'))
              .whereRef('runs.session_id', '=', 'messages.session_id'),
          ),
        ),
      ),
  deleteEmptySessions: (db, p, dialect) =>
    db
      .deleteFrom('sessions')
      .where('id', 'in', idIn(p, dialect))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('runs')
              .select(sql`1`.as('one'))
              .whereRef('runs.session_id', '=', 'sessions.id'),
          ),
        ),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('messages')
              .select(sql`1`.as('one'))
              .whereRef('messages.session_id', '=', 'sessions.id'),
          ),
        ),
      ),
  /** For a dry run: every reference to the given artifacts, and their sizes. */
  artifactRefsOf: (db, p, dialect) =>
    db
      .selectFrom('artifact_refs')
      .innerJoin('artifacts', 'artifacts.sha256', 'artifact_refs.sha256')
      .select(['artifact_refs.sha256', 'artifact_refs.run_id', 'artifacts.size'])
      .where('artifact_refs.sha256', 'in', idIn(p, dialect)),
  /** For a dry run: the runs of the given sessions. */
  runsOfSessions: (db, p, dialect) =>
    db.selectFrom('runs').select(['id', 'session_id']).where('session_id', 'in', idIn(p, dialect)),
} satisfies Record<string, Build>;

export type PruneStatement = keyof typeof PRUNE_BUILDS;

/** What a batch is taken from: one status, finished before the bound, after the cursor. */
export interface PruneSelection {
  status: (typeof FINISHED)[number];
  /** Exclusive upper bound on `(updated_at, id)`: `finishedBefore`, or the oldest run `keepLast` keeps. */
  before: { at: number; id: string };
  after: { at: number; id: string } | null;
  limit: number;
  /** Count what the batch holds, change nothing. */
  dryRun: boolean;
}

/** Rows a batch deleted (or holds, dry). */
export interface PruneCounts {
  runs: number;
  events: number;
  steps: number;
  tool_calls: number;
  approvals: number;
  messages: number;
  /** Deleted only (a dry run reports these for the whole prune: see `runtime/prune.ts`). */
  artifacts: number;
  artifact_bytes: number;
  sessions: number;
}

/** One batch: what it counted, its runs and sessions, the artifacts they referenced, the cursor after it. */
export interface PruneBatch {
  counts: PruneCounts;
  runIds: string[];
  sessionIds: string[];
  artifactShas: string[];
  last: { at: number; id: string } | null;
}

/** A statement the batch wants run, with its values. */
export interface PruneStep {
  name: PruneStatement;
  values: Record<string, unknown>;
}

/** What a statement gave: its rows and the rows it changed. */
export interface PruneStepResult {
  rows: Record<string, unknown>[];
  count: number;
}

/**
 * One batch as the statements it runs, in order, for a driver to execute in one transaction:
 * SQLite synchronously inside the commit queue's unit, PostgreSQL over one client.
 */
export function* pruneBatch(
  dialect: Dialect,
  selection: PruneSelection,
): Generator<PruneStep, PruneBatch, PruneStepResult> {
  const ids = (list: readonly string[]) => ({ ids: idList(dialect, list) });
  const candidates = (yield {
    name: 'pruneCandidates',
    values: {
      status: selection.status,
      after_at: selection.after?.at ?? -1,
      after_id: selection.after?.id ?? '',
      before_at: selection.before.at,
      before_id: selection.before.id,
      limit: selection.limit,
    },
  }).rows as { id: string; session_id: string; updated_at: number }[];
  const empty: PruneCounts = zeroCounts();
  const lastRow = candidates.at(-1);
  const last = lastRow ? { at: Number(lastRow.updated_at), id: lastRow.id } : null;
  if (candidates.length === 0) return { counts: empty, runIds: [], sessionIds: [], artifactShas: [], last };
  let sessionIds = [...new Set(candidates.map((c) => c.session_id))];
  let runs = candidates;
  if (!selection.dryRun) {
    yield { name: 'lockSessions', values: ids(sessionIds) };
    const busy = new Set((yield { name: 'activeSessions', values: ids(sessionIds) }).rows.map((r) => r.session_id));
    if (busy.size > 0) {
      runs = runs.filter((run) => !busy.has(run.session_id));
      sessionIds = sessionIds.filter((id) => !busy.has(id));
    }
  }
  // Children go with their parents (and theirs with them), in the same unit.
  let frontier = runs.map((run) => run.id);
  for (let depth = 0; frontier.length > 0 && depth < DEFAULTS.treeWalkSteps; depth += 1) {
    const children = (yield { name: 'finishedChildren', values: ids(frontier) }).rows as typeof candidates;
    runs = [...runs, ...children];
    sessionIds = [...new Set([...sessionIds, ...children.map((child) => child.session_id)])];
    frontier = children.map((child) => child.id);
  }
  const runIds = runs.map((run) => run.id);
  const artifactShas = (yield { name: 'batchArtifacts', values: ids(runIds) }).rows.map((r) => String(r.sha256));
  if (selection.dryRun) {
    const row = (yield { name: 'countOfBatch', values: ids(runIds) }).rows[0] ?? {};
    const n = (key: string) => Number(row[key] ?? 0);
    const counts = {
      ...empty,
      runs: runIds.length,
      events: n('events'),
      steps: n('steps'),
      tool_calls: n('tool_calls'),
      approvals: n('approvals'),
      messages: n('messages'),
    };
    return { counts, runIds, sessionIds, artifactShas, last };
  }
  const counts = { ...empty };
  if (runIds.length > 0) {
    if (dialect === 'sqlite') yield { name: 'raiseFeedFloor', values: ids(runIds) };
    counts.events = (yield { name: 'deleteEvents', values: ids(runIds) }).count;
    counts.steps = (yield { name: 'deleteSteps', values: ids(runIds) }).count;
    counts.tool_calls = (yield { name: 'deleteToolCalls', values: ids(runIds) }).count;
    counts.approvals = (yield { name: 'deleteApprovals', values: ids(runIds) }).count;
    counts.messages = (yield { name: 'deleteMessages', values: ids(runIds) }).count;
    yield { name: 'deleteArtifactRefs', values: ids(runIds) };
    yield { name: 'deleteLabels', values: ids(runIds) };
    counts.runs = (yield { name: 'deleteRuns', values: ids(runIds) }).count;
  }
  if (artifactShas.length > 0) {
    const gone = (yield { name: 'deleteOrphanArtifacts', values: ids(artifactShas) }).rows;
    counts.artifacts = gone.length;
    counts.artifact_bytes = gone.reduce((sum, r) => sum + Number(r.size), 0);
  }
  if (sessionIds.length > 0) {
    counts.messages += (yield { name: 'deleteRunlessHistory', values: ids(sessionIds) }).count;
    counts.sessions = (yield { name: 'deleteEmptySessions', values: ids(sessionIds) }).count;
  }
  return { counts, runIds, sessionIds, artifactShas, last };
}

/** Counts of nothing. */
export function zeroCounts(): PruneCounts {
  return {
    runs: 0,
    events: 0,
    steps: 0,
    tool_calls: 0,
    approvals: 0,
    messages: 0,
    artifacts: 0,
    artifact_bytes: 0,
    sessions: 0,
  };
}
