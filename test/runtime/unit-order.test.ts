/**
 * A run's units build on each other: once one fails, none queued behind it is written. Units of
 * one run commit one after another (PostgreSQL's store chains them; SQLite's commit queue takes
 * the next on a later turn), so a unit can be queued while the one before it is in flight; if
 * the earlier one is refused (a lapsed fence, a full disk) and the later one landed, the run's
 * log would skip the earlier one's events.
 */
import { describe, expect, it } from 'vitest';
import type { Fence, Store, UnitWriter } from '../../src/store/index.js';
import { createDraftRelay } from '../../src/runtime/drive/draft-relay.js';
import { createRunFlush } from '../../src/runtime/drive/run-flush.js';
import { createUnitBuffer } from '../../src/runtime/drive/unit-buffer.js';
import { createEventHub } from '../../src/runtime/model/event-hub.js';
import { BatonError, createFailure, type Failure } from '../../src/failure.js';

/** A store that writes a run's units in turn, refusing the first one, and records what landed. */
function chainedStore() {
  const landed: number[] = [];
  let tail: Promise<unknown> = Promise.resolve();
  let units = 0;
  let refuse = () => {};
  const refused = new Promise<void>((resolve) => (refuse = resolve));
  const store = {
    write<T>(work: (writer: UnitWriter) => T, _fence?: Fence): Promise<T> {
      const index = units++;
      const unit = tail
        .catch(() => undefined)
        .then(async () => {
          const seqs: number[] = [];
          const writer = { insertEvent: (row: { seq: number }) => seqs.push(row.seq) } as unknown as UnitWriter;
          const value = work(writer);
          if (index === 0) {
            // The first unit was built; the database refuses it once the next one is queued.
            await refused;
            throw new BatonError(createFailure('run.version_conflict', 'the run is held by a newer claim'));
          }
          landed.push(...seqs);
          return value;
        });
      tail = unit;
      return unit;
    },
  } as unknown as Store;
  return { store, landed, refuseFirst: () => refuse() };
}

describe("a run's units in order", () => {
  it('writes nothing queued behind a unit that failed, so the log keeps no gap', async () => {
    const { store, landed, refuseFirst } = chainedStore();
    const hub = createEventHub();
    const units = createUnitBuffer('r1', 2);
    const failures: Failure[] = [];
    const flushes = createRunFlush({
      runId: 'r1',
      store,
      hub,
      fence: { runId: 'r1', owner: 'a', epoch: 1 },
      units,
      snapshots: { dirty: false, save: () => undefined } as never,
      drafts: createDraftRelay({ runId: 'r1', hub, units, unwritten: () => false, retired: () => false }),
      stopped: () => false,
      committed: () => undefined,
      failed: (failure) => failures.push(failure),
    });
    const stageEvents = (n: number) => {
      for (let i = 0; i < n; i += 1) units.stage(() => units.writeEvent('step', { i }));
    };
    stageEvents(3);
    const first = flushes.flush();
    // The first unit is built (events 3, 4, 5) and in flight; the run goes on and queues the next.
    await expect.poll(() => units.seq).toBe(5);
    stageEvents(2);
    const second = flushes.flush();
    expect(second).not.toBe(first);
    refuseFirst();
    await expect(first).rejects.toThrow('newer claim');
    await expect(second).rejects.toMatchObject({ code: 'run.version_conflict' });
    expect(landed).toEqual([]);
    expect(failures.map((f) => f.code)).toEqual(['run.version_conflict', 'run.version_conflict']);
  });
});
