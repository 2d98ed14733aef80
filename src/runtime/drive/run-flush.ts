/**
 * A run's flushes. A flush writes what the run staged (its ops, its events, its latest snapshot)
 * in one compare-and-set unit of the shared transaction, then publishes the events once the
 * COMMIT is done. At most one flush waits to be written; calls while it waits join it, and a
 * call once its writing began starts the next.
 */
import { BatonError, createFailure, toFailure, type Failure } from '../../failure.js';
import type { Fence, Store, UnitWriter } from '../../store/index.js';
import type { EventHub } from '../model/event-hub.js';
import { failpoint } from '../model/failpoints.js';
import type { RunEventRecord } from '../model/types.js';
import type { DraftRelay } from './draft-relay.js';
import type { SnapshotSaver } from './snapshot-saver.js';
import type { UnitBuffer } from './unit-buffer.js';

/** What the flushes of a run need from its driver. */
export interface RunFlushDeps {
  runId: string;
  store: Store;
  hub: EventHub;
  /** The run's claim, carried with every write. */
  fence: Fence;
  units: UnitBuffer;
  snapshots: SnapshotSaver;
  drafts: DraftRelay;
  /** True once the driver was stopped: it writes nothing more. */
  stopped(): boolean;
  /** Told of a commit once its events are published. */
  committed(events: readonly RunEventRecord[]): void;
  /** Told that a write failed; the run cannot go on here. */
  failed(failure: Failure): void;
}

/** The flushes of one run. */
export interface RunFlush {
  /** True while a flush waits to be written. */
  readonly waiting: boolean;
  /** Makes everything staged so far durable; resolves after the COMMIT. */
  flush(): Promise<void>;
}

/** Creates the flushes of one run. */
export function createRunFlush(deps: RunFlushDeps): RunFlush {
  const { runId, units, snapshots, drafts } = deps;
  let waiting: Promise<void> | null = null;
  /** A flush failed: the run's later units build on one that never landed, so none is written. */
  let broken: Failure | null = null;

  /** Writes the staged ops, the events and the snapshot; runs inside the shared transaction. */
  function write(writer: UnitWriter): RunEventRecord[] {
    waiting = null;
    // A stopped driver writes nothing more, as if the process had died here; whoever waits
    // on this flush learns that the runtime closed.
    if (deps.stopped()) throw new BatonError(createFailure('run.closed', `Run '${runId}' stopped before this write`));
    // Queued behind a unit that failed: its events would be numbered after ones that are not on
    // disk (a gap in the log), and its snapshot after a transition that never landed.
    if (broken) throw new BatonError(broken);
    return units.write(writer, snapshots.save);
  }

  function committed(events: RunEventRecord[], flush: number): void {
    failpoint('commit.publishing');
    deps.hub.publish(events);
    drafts.settle(flush);
    drafts.release();
    deps.committed(events);
  }

  return {
    get waiting() {
      return waiting !== null;
    },
    flush() {
      if (!waiting) {
        const flush = drafts.begin();
        waiting = deps.store.write(write, deps.fence).then((events) => committed(events, flush));
        waiting.catch((error: unknown) => {
          // The run is retired: its held drafts are dropped (they are live text, never kept).
          const failure = toFailure(error, 'store.checkpoint_failed');
          broken ??= failure;
          drafts.settle(flush);
          drafts.drop();
          deps.failed(failure);
        });
      }
      return waiting;
    },
  };
}
