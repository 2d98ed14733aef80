/**
 * A run's write buffer and its event numbering. Writes are staged as ops and run, in the order
 * they were staged, in the run's next unit of work; an event gets its seq only when it is
 * written, so seq follows commit order whatever order the actors staged in.
 */
import type { UnitWriter } from '../../store/index.js';
import type { LogEventType, RunEventRecord } from '../model/types.js';

/** A write waiting for the run's next unit of work. */
export type StagedOp = (writer: UnitWriter) => void;

/** The write buffer of one run. */
export interface UnitBuffer {
  /** The seq of the last event written (in a committed unit or the one being written). */
  readonly seq: number;
  /** How many ops wait for the next write. */
  readonly staged: number;
  stage(op: StagedOp): void;
  /** The writer of the unit being written; throws outside a staged op. */
  writer(): UnitWriter;
  /** Writes an event in the unit being written, numbered next (`createdAt`: a copied event keeps its own time). */
  writeEvent(type: LogEventType, data: Record<string, unknown>, createdAt?: number): void;
  /** Stages a draft among the events: it goes out with them, numbered as the event before it, never stored. */
  stageDraft(data: Record<string, unknown>, createdAt: number): void;
  /** Runs the staged ops, then `last`, in `writer`'s unit; returns what the unit will publish, drafts among it. */
  write(writer: UnitWriter, last: StagedOp): RunEventRecord[];
}

/** Creates the write buffer of run `runId`, whose last written event is `lastSeq`. */
export function createUnitBuffer(runId: string, lastSeq: number): UnitBuffer {
  let seq = lastSeq;
  let ops: StagedOp[] = [];
  /** The writer of the unit being written (set while `write` runs). */
  let unit: UnitWriter | null = null;
  let written: RunEventRecord[] = [];

  function writer(): UnitWriter {
    if (!unit) throw new Error(`Run '${runId}': a write outside its unit of work`);
    return unit;
  }

  return {
    get seq() {
      return seq;
    },
    get staged() {
      return ops.length;
    },
    stage(op) {
      ops.push(op);
    },
    writer,
    writeEvent(type, data, createdAt = Date.now()) {
      const record: RunEventRecord = { runId, seq: seq + 1, type, data, createdAt };
      writer().insertEvent({
        run_id: runId,
        seq: record.seq,
        type,
        data: JSON.stringify(data),
        created_at: record.createdAt,
      });
      seq += 1;
      written.push(record);
    },
    stageDraft(data, createdAt) {
      ops.push(() => written.push({ runId, seq, type: 'draft', data, createdAt }));
    },
    write(into, last) {
      const staged = ops;
      ops = [];
      written = [];
      unit = into;
      try {
        for (const op of staged) op(into);
        last(into);
      } finally {
        unit = null;
      }
      const committed = written;
      written = [];
      return committed;
    },
  };
}
