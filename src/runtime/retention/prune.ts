/**
 * Retention: `runtime.prune()` deletes finished runs (succeeded or failed) that finished before
 * an instant, with their events, steps, ledger rows, approvals and session history, the
 * artifacts no remaining run stored, and sessions left empty. Only finished runs are ever
 * deleted (see `store/prune-statements.ts` for what a batch re-checks), a bounded batch per
 * unit, a turn of the event loop between batches, so live runs commit in between. A scheduled
 * prune (`retention`) runs the same on a timer.
 */
import { TERMINAL_STATUSES, type TerminalStatus } from '../../../machines/types.js';
import { fail } from '../../failure.js';
import { zeroCounts, type FinishedRun, type PruneCounts, type PruneSelection, type Store } from '../../store/index.js';

/** The statuses a finished run has. */
export type FinishedStatus = TerminalStatus;

/** What `runtime.prune()` deletes. */
export interface PruneOptions {
  /** Runs that finished before this instant (epoch ms or a Date). */
  finishedBefore: number | Date;
  /** Only runs that ended so (default both). */
  status?: FinishedStatus | readonly FinishedStatus[];
  /** Keep the newest `keepLast` finished runs (of the statuses chosen), however old. */
  keepLast?: number;
  /** Count what would be deleted; change nothing. */
  dryRun?: boolean;
  /** Runs per unit of work (default 100): the longest a live commit can wait behind the prune. */
  batchSize?: number;
  /** Stops between batches; what was deleted stays deleted. */
  signal?: AbortSignal;
}

/** What a prune deleted (or, dry, would delete). */
export interface PruneReport {
  dryRun: boolean;
  runs: number;
  events: number;
  steps: number;
  toolCalls: number;
  approvals: number;
  messages: number;
  sessions: number;
  artifacts: number;
  artifactBytes: number;
  /** Units of work written (each one transaction). */
  batches: number;
  /** The longest one took, in ms: how long a live commit could wait behind the prune. */
  longestBatchMs: number;
  /** Bytes given back to the file system afterwards (SQLite created with incremental auto-vacuum). */
  reclaimedBytes: number;
  durationMs: number;
}

/** A scheduled prune inside a runtime (`RuntimeOptions.retention`). */
export interface RetentionOptions {
  /** Prune runs that finished more than this long ago (ms). */
  maxAgeMs: number;
  status?: FinishedStatus | readonly FinishedStatus[];
  keepLast?: number;
  /** How often (default one hour; the first prune comes one interval, at most a minute, after open). */
  everyMs?: number;
  /** Told of each scheduled prune, or of why it failed. */
  onPrune?: (report: PruneReport | null, error?: unknown) => void;
}

const FINISHED: readonly FinishedStatus[] = TERMINAL_STATUSES;
const DEFAULT_BATCH = 100;
/** Pages given back per unit after a prune (1 MiB of 4 KiB pages). */
const RECLAIM_PAGES = 256;

/** Runs one prune over `store`. */
export async function prune(store: Store, options: PruneOptions): Promise<PruneReport> {
  const started = performance.now();
  const { statuses, before, batchSize, dryRun } = checkOptions(options);
  const totals = zeroCounts();
  const report = { batches: 0, longestBatchMs: 0 };
  // A dry run deletes nothing, so what goes with the runs is decided once it knows them all.
  const seen = dryRun ? { runs: new Set<string>(), sessions: new Set<string>(), shas: new Set<string>() } : null;
  const bound = await boundOf(store, statuses, before, options.keepLast);
  for (const status of statuses) {
    let after: PruneSelection['after'] = null;
    for (;;) {
      if (options.signal?.aborted) break;
      const batchStarted = performance.now();
      const batch = await store.pruneBatch({ status, before: bound, after, limit: batchSize, dryRun });
      report.longestBatchMs = Math.max(report.longestBatchMs, performance.now() - batchStarted);
      if (batch.runIds.length > 0) report.batches += 1;
      add(totals, batch.counts);
      if (seen) {
        for (const id of batch.runIds) seen.runs.add(id);
        for (const id of batch.sessionIds) seen.sessions.add(id);
        for (const sha of batch.artifactShas) seen.shas.add(sha);
      }
      // The cursor moves past every candidate, deleted or passed over (a session still in use).
      if (!batch.last) break;
      after = batch.last;
      // A turn of the event loop: live runs' commits go first.
      await nextTurn();
    }
  }
  if (seen) Object.assign(totals, await dryRunLeftovers(store, seen));
  let reclaimedBytes = 0;
  if (!dryRun && totals.runs > 0) {
    for (;;) {
      const space = await store.reclaimSpace(RECLAIM_PAGES);
      reclaimedBytes += space.freed_pages * space.page_size;
      if (space.freed_pages === 0 || space.free_pages === 0 || options.signal?.aborted) break;
      await nextTurn();
    }
  }
  return {
    dryRun,
    runs: totals.runs,
    events: totals.events,
    steps: totals.steps,
    toolCalls: totals.tool_calls,
    approvals: totals.approvals,
    messages: totals.messages,
    sessions: totals.sessions,
    artifacts: totals.artifacts,
    artifactBytes: totals.artifact_bytes,
    batches: report.batches,
    longestBatchMs: round(report.longestBatchMs),
    reclaimedBytes,
    durationMs: round(performance.now() - started),
  };
}

function checkOptions(options: PruneOptions) {
  const at = options.finishedBefore instanceof Date ? options.finishedBefore.getTime() : options.finishedBefore;
  if (typeof at !== 'number' || !Number.isFinite(at)) {
    fail('input.invalid', 'prune needs finishedBefore: an instant (epoch ms or a Date)');
  }
  const statuses =
    options.status === undefined ? FINISHED : typeof options.status === 'string' ? [options.status] : options.status;
  for (const status of statuses) {
    if (!FINISHED.includes(status)) {
      fail(
        'input.invalid',
        `prune deletes finished runs only: status must be succeeded or failed, not '${String(status)}'`,
      );
    }
  }
  if (options.keepLast !== undefined && !(Number.isInteger(options.keepLast) && options.keepLast >= 0)) {
    fail('input.invalid', `keepLast must be a whole number ≥ 0, not ${String(options.keepLast)}`);
  }
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 5_000) {
    fail('input.invalid', `batchSize must be 1–5000, not ${String(batchSize)}`);
  }
  return { statuses: [...new Set(statuses)], before: Math.trunc(at), batchSize, dryRun: options.dryRun === true };
}

/**
 * Where a status's batches stop: before `finishedBefore`, and before the oldest of the newest
 * `keepLast` finished runs (of every status chosen) — an exclusive bound on `(updated_at, id)`.
 */
async function boundOf(
  store: Store,
  statuses: readonly FinishedStatus[],
  before: number,
  keepLast: number | undefined,
): Promise<{ at: number; id: string }> {
  const bound = { at: before, id: '' };
  if (!keepLast) return bound;
  const newest: FinishedRun[] = [];
  for (const s of statuses) newest.push(...(await store.newestFinished(s, keepLast)));
  newest.sort((a, b) => b.updated_at - a.updated_at || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0));
  const oldestKept = newest.length >= keepLast ? newest[keepLast - 1] : newest.at(-1);
  if (!oldestKept) return bound;
  const kept = { at: Number(oldestKept.updated_at), id: oldestKept.id };
  return kept.at < bound.at || (kept.at === bound.at && kept.id < bound.id) ? kept : bound;
}

/** A dry run's artifacts and sessions: those whose every run it would delete. */
async function dryRunLeftovers(
  store: Store,
  seen: { runs: Set<string>; sessions: Set<string>; shas: Set<string> },
): Promise<Pick<PruneCounts, 'artifacts' | 'artifact_bytes' | 'sessions'>> {
  const result = { artifacts: 0, artifact_bytes: 0, sessions: 0 };
  for (const shas of chunks([...seen.shas], 500)) {
    const refs = await store.artifactRefsOf(shas);
    const bySha = new Map<string, { size: number; kept: boolean }>();
    for (const ref of refs) {
      const entry = bySha.get(ref.sha256) ?? { size: Number(ref.size), kept: false };
      if (!seen.runs.has(ref.run_id)) entry.kept = true;
      bySha.set(ref.sha256, entry);
    }
    for (const entry of bySha.values()) {
      if (entry.kept) continue;
      result.artifacts += 1;
      result.artifact_bytes += entry.size;
    }
  }
  for (const sessions of chunks([...seen.sessions], 500)) {
    const runs = await store.runsOfSessions(sessions);
    const kept = new Set(runs.filter((run) => !seen.runs.has(run.id)).map((run) => run.session_id));
    result.sessions += sessions.filter((id) => !kept.has(id)).length;
  }
  return result;
}

function add(totals: PruneCounts, counts: PruneCounts): void {
  for (const key of Object.keys(totals) as (keyof PruneCounts)[]) totals[key] += counts[key];
}

function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** A turn of the event loop: what live runs queued meanwhile goes first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Prunes on a schedule until stopped: `prune()` with `finishedBefore` the interval's age ago.
 * Returns the stop, which aborts a prune under way and resolves once it has let go of the store.
 */
export function scheduleRetention(
  run: (options: PruneOptions) => Promise<PruneReport>,
  retention: RetentionOptions,
): () => Promise<void> {
  const everyMs = retention.everyMs ?? 3_600_000;
  if (!(retention.maxAgeMs >= 0) || !(everyMs >= 1)) {
    fail('input.invalid', 'retention needs maxAgeMs ≥ 0 and everyMs ≥ 1');
  }
  const stop = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const next = (ms: number) => {
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  const tick = () => {
    running = run({
      finishedBefore: Date.now() - retention.maxAgeMs,
      ...(retention.status ? { status: retention.status } : {}),
      ...(retention.keepLast !== undefined ? { keepLast: retention.keepLast } : {}),
      signal: stop.signal,
    })
      .then(
        (report) => retention.onPrune?.(report),
        (error: unknown) => {
          if (!stop.signal.aborted) retention.onPrune?.(null, error);
        },
      )
      .finally(() => {
        if (!stop.signal.aborted) next(everyMs);
      });
  };
  next(Math.min(everyMs, 60_000));
  return async () => {
    stop.abort();
    clearTimeout(timer);
    await running.catch(() => undefined);
  };
}
