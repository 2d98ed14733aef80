/**
 * A run as the API reports it: its row with the failure recovery quarantined it for, a page of
 * runs, its events followed, the wait for it to settle. A run driven here is read from memory
 * where that is fresher (its status while followed); everything else is read from the file.
 */
import { BatonError, fail, quoteId } from '../../failure.js';
import type { Store } from '../../store/index.js';
import { filterLabels } from '../model/labels.js';
import { damageOfUnfinished } from '../drive/quarantine.js';
import type { EventHub } from '../model/event-hub.js';
import { checkListFilter, toRun } from '../model/rows.js';
import { scopeKey } from '../model/tenant-keys.js';
import type { Run, RunEventRecord, RunListFilter } from '../model/types.js';
import { pendingInputRow } from './pending-input.js';
import { withTree } from './run-tree.js';
import { followEvents, waitForRun, type FollowContext, type FollowOptions } from './follow.js';
import type { RunRegistry } from '../registry/run-registry.js';

/** What the views need from their runtime. */
export interface RunViewsDeps {
  store: Store;
  hub: EventHub;
  registry: Pick<RunRegistry, 'get' | 'has' | 'withQuarantine'>;
  isClosed(): boolean;
  /** Callbacks run once when the runtime closes: a blocked `wait()` or `events()` is released. */
  onClose: Set<() => void>;
}

/** The runtime's `get`, `list`, `events` and `wait` (see `Runtime`). */
export interface RunViews {
  get(runId: string): Promise<Run>;
  list(filter?: RunListFilter): Promise<{ runs: Run[]; nextCursor: string | null }>;
  events(runId: string, opts?: FollowOptions): AsyncGenerator<RunEventRecord>;
  wait(runId: string): Promise<Run>;
}

/** Creates the views of a runtime's runs. */
export function createRunViews(deps: RunViewsDeps): RunViews {
  const { store, registry } = deps;
  const follow: FollowContext = {
    store,
    hub: deps.hub,
    liveStatus: (runId) => registry.get(runId)?.driver.status,
    isClosed: deps.isClosed,
    onClose: deps.onClose,
  };

  return {
    /** The durable state of a run (a quarantined one carries its `store.corrupt_row` failure). */
    async get(runId) {
      if (typeof runId !== 'string' || runId === '')
        fail('input.invalid', `A run id is a non-empty string, not ${String(runId)}`);
      const row = await store.getRun(runId);
      if (!row) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
      return registry.withQuarantine(await withTree(store, row, toRun(row, await pendingInputRow(store, row))));
    },

    /** Runs, newest first, filtered by status and session; page with `cursor`. */
    async list(filter = {}) {
      const limit = filter.limit ?? 50;
      checkListFilter(filter);
      const { metadata, tag, tags, ...rest } = filter;
      const labels = filterLabels(metadata, [...(tag === undefined ? [] : [tag]), ...(tags ?? [])]);
      // A session is named as its client names it, within the filter's tenant (the default one without).
      const sessionId = filter.sessionId === undefined ? undefined : scopeKey(filter.tenantId, filter.sessionId);
      const rows = await store.listRuns({ ...rest, sessionId, limit, ...(labels.length > 0 ? { labels } : {}) });
      const last = rows[rows.length - 1];
      return {
        runs: await Promise.all(
          rows.map(async (row) =>
            registry.withQuarantine(await withTree(store, row, toRun(row, await pendingInputRow(store, row)))),
          ),
        ),
        nextCursor: rows.length === limit && last ? `${last.created_at}:${last.id}` : null,
      };
    },

    /** The committed events of a run after `after`, then live ones until the run ends (unless `follow: false`). */
    events(runId, opts = {}) {
      return followEvents(follow, runId, opts);
    },

    /** Resolves when the run is terminal or waiting for a human (durably); a quarantined run rejects. */
    async wait(runId) {
      // A run driven here was loaded, so its row was sound.
      const damage = damageOfUnfinished(registry.has(runId) ? undefined : await store.getRun(runId));
      if (damage) throw new BatonError(damage);
      return waitForRun(follow, runId);
    },
  };
}
