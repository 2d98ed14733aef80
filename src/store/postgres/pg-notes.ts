/**
 * What PostgreSQL stores tell each other after a commit, over LISTEN/NOTIFY: the channels, the
 * notifications a unit sends, and how a received one reads as a `StoreNote`.
 */
import type { StoreNote } from '../store-api.js';
import type { RecordedWrite } from './pg-recorder.js';

/** Runs that need driving (new, decided, let go). */
export const RUNS_CHANNEL = 'baton_runs';
/** Events committed for a run. */
export const EVENTS_CHANNEL = 'baton_events';
/** A cancel asked of a run, for the runtime that drives it. */
export const CANCEL_CHANNEL = 'baton_cancel';

/** Every channel a store listens on. */
export const CHANNELS = [RUNS_CHANNEL, EVENTS_CHANNEL, CANCEL_CHANNEL] as const;

/**
 * The notifications a unit sends on commit (NOTIFY inside a transaction is delivered when it
 * commits): its events' range per run, and whether it made a run claimable (a new run, a
 * decision that makes a waiting run due).
 */
export function notesOf(ops: readonly RecordedWrite[]): [string, string][] {
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
  if (
    ops.some(
      (op) =>
        op.name === 'insertRun' || op.name === 'promoteQueueHead' || (op.name === 'setWakeAt' && op.values.at === 0),
    )
  ) {
    notes.push([RUNS_CHANNEL, '']);
  }
  // A cancel asked of another run: whoever drives it carries it out; a waiting one is due.
  for (const op of ops.filter((each) => each.name === 'askCancel')) {
    notes.push([CANCEL_CHANNEL, String(op.values.id)]);
    notes.push([RUNS_CHANNEL, '']);
  }
  return notes;
}

/** A notification as a `StoreNote`, or null when it is not one of Baton's. */
export function parseNote(channel: string, payload: string | undefined): StoreNote | null {
  if (channel === RUNS_CHANNEL) return { kind: 'runs' };
  if (channel === CANCEL_CHANNEL) return payload ? { kind: 'cancel', runId: payload } : null;
  if (channel !== EVENTS_CHANNEL || !payload) return null;
  const [runId, from, to, status] = payload.split(' ');
  if (!runId || !from || !to) return null;
  return { kind: 'events', runId, from: Number(from), to: Number(to), status: status ?? null };
}
