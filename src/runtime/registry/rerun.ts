/**
 * Rerunning finished runs after an incident (`runtime.rerun`): each run the filter matches is
 * forked at the step it ended in — the step whose planner or tool call failed — in batches. A
 * rerun's fork carries the idempotency key `rerun:<run>:<step>`, so the same command run again
 * finds the forks it made and makes none, and is never rerun itself (fork it by hand to try it
 * again). Only the runtime's own agent's runs are matched.
 */
import { fail } from '../../failure.js';
import type { RunRow, Store } from '../../store/index.js';
import { checkListFilter } from '../model/rows.js';
import { scopeKey, unscopeKey } from '../model/tenant-keys.js';
import type { ForkRequest, RerunEntry, RerunFilter, RerunReport, Run } from '../model/types.js';
import { toFailure } from '../../failure.js';

/** What a rerun needs from its runtime. */
export interface RerunDeps {
  store: Store;
  /** The runtime's agent: only its runs are rerun (another agent's runtimes rerun theirs). */
  agent: string;
  fork(runId: string, request: ForkRequest): Promise<Run>;
}

const PAGE = 200;

/** The idempotency key of the rerun of run `runId` from step `step`. */
export function rerunKey(runId: string, step: number): string {
  return `${RERUN_PREFIX}${runId}:${step}`;
}

const RERUN_PREFIX = 'rerun:';

/** The finished runs the filter matches, newest first, at most `limit`. */
async function matching(store: Store, agent: string, filter: RerunFilter, limit: number): Promise<RunRow[]> {
  const found: RunRow[] = [];
  const sessionId = filter.sessionId === undefined ? undefined : scopeKey(filter.tenantId, filter.sessionId);
  let cursor: string | undefined;
  for (;;) {
    const rows = await store.listRuns({
      status: filter.status ?? 'failed',
      sessionId,
      tenantId: filter.tenantId,
      limit: PAGE,
      cursor,
    });
    for (const row of rows) {
      if (row.agent !== null && row.agent !== agent) continue;
      // A run a rerun made is not rerun by the next one: the same command again makes nothing.
      if (unscopeKey(row.tenant_id, row.idempotency_key)?.startsWith(RERUN_PREFIX)) continue;
      if (filter.since !== undefined && row.updated_at < filter.since) continue;
      if (filter.failureCode !== undefined) {
        const code = row.failure ? (JSON.parse(row.failure) as { code?: string }).code : undefined;
        if (code !== filter.failureCode) continue;
      }
      found.push(row);
      if (found.length >= limit) return found;
    }
    const last = rows[rows.length - 1];
    if (rows.length < PAGE || !last) return found;
    cursor = `${last.created_at}:${last.id}`;
  }
}

/** Forks every run the filter matches at the step it ended in; see the module comment. */
export async function rerunRuns(deps: RerunDeps, filter: RerunFilter): Promise<RerunReport> {
  const status = filter.status ?? 'failed';
  if (status !== 'failed' && status !== 'succeeded') {
    fail('input.invalid', `A rerun forks finished runs: status 'failed' or 'succeeded', not '${String(status)}'`);
  }
  checkListFilter({ status });
  const batchSize = filter.batchSize ?? 20;
  const limit = filter.limit ?? 1_000;
  if (!Number.isInteger(batchSize) || batchSize < 1 || !Number.isInteger(limit) || limit < 1) {
    fail('input.invalid', 'batchSize and limit are whole numbers of at least 1');
  }
  const rows = await matching(deps.store, deps.agent, filter, limit);
  const report: RerunReport = {
    dryRun: filter.dryRun === true,
    matched: rows.length,
    created: 0,
    existing: 0,
    reruns: [],
    failed: [],
  };
  for (let start = 0; start < rows.length; start += batchSize) {
    const batch = rows.slice(start, start + batchSize);
    const entries = await Promise.all(batch.map((row) => rerunOne(deps, filter, row, report)));
    for (const entry of entries) if (entry) report.reruns.push(entry);
  }
  return report;
}

async function rerunOne(
  deps: RerunDeps,
  filter: RerunFilter,
  row: RunRow,
  report: RerunReport,
): Promise<RerunEntry | null> {
  const atStep = row.step_index;
  const key = rerunKey(row.id, atStep);
  const existing = await deps.store.findRunByIdempotencyKey(scopeKey(row.tenant_id ?? undefined, key));
  if (existing) {
    report.existing += 1;
    return { sourceRunId: row.id, atStep, runId: existing.id, created: false };
  }
  if (filter.dryRun) return { sourceRunId: row.id, atStep, runId: null, created: false };
  try {
    const fork = await deps.fork(row.id, {
      atStep,
      options: { idempotencyKey: key },
      ...(filter.repeatEffects ? { repeatEffects: filter.repeatEffects } : {}),
      ...(filter.by ? { by: filter.by } : {}),
    });
    report.created += 1;
    return { sourceRunId: row.id, atStep, runId: fork.id, created: true };
  } catch (error) {
    report.failed.push({ sourceRunId: row.id, atStep, failure: toFailure(error, 'internal.error') });
    return null;
  }
}
