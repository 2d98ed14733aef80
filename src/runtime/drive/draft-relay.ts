/**
 * Drafts: streamed model text, published live, never stored, never ahead of the events before
 * it. A model may stream its first tokens while the events before them (the last step's result,
 * the move to planning) are still staged or being committed: a draft staged among them goes out
 * with them; one that comes while they are being committed waits for that flush. Flushes are
 * numbered as they begin and settle in that order (one run's writes queue up).
 */
import type { EventHub } from '../model/event-hub.js';
import type { UnitBuffer } from './unit-buffer.js';

/** What the drafts of a run need from its driver. */
export interface DraftRelayDeps {
  runId: string;
  hub: EventHub;
  units: UnitBuffer;
  /** True while something is staged and not written yet (ops, a transition, a flush to begin). */
  unwritten(): boolean;
  /** True once the run is no longer driven here: its drafts are dropped. */
  retired(): boolean;
}

/** The drafts of one run, and the count of its flushes they wait on. */
export interface DraftRelay {
  /** Publishes a draft now, among the staged events, or after the flushes under way. */
  publish(data: Record<string, unknown>): void;
  /** A flush begins: its number (a draft held from now on waits for it). */
  begin(): number;
  /** Flush `flush` settled, committed or failed (again is a no-op: flushes settle in the order they began). */
  settle(flush: number): void;
  /** Publishes, in order, the held drafts whose preceding events are out now. */
  release(): void;
  /** Drops every held draft (the run is retired: drafts are live text, never kept). */
  drop(): void;
}

/** Creates the drafts of one run. */
export function createDraftRelay(deps: DraftRelayDeps): DraftRelay {
  const { runId, hub, units } = deps;
  let held: { after: number; data: Record<string, unknown>; createdAt: number }[] = [];
  let begun = 0;
  let settled = 0;
  return {
    publish(data) {
      if (deps.retired()) return;
      const createdAt = Date.now();
      // Events staged and not written yet: the draft takes its place among them, numbered after
      // the last event before it.
      if (deps.unwritten()) units.stageDraft(data, createdAt);
      // Events written and not committed yet: the draft follows them once they are out.
      else if (begun > settled || held.length > 0) held.push({ after: begun, data, createdAt });
      else hub.publish([{ runId, seq: units.seq, type: 'draft', data, createdAt }]);
    },
    begin() {
      begun += 1;
      return begun;
    },
    settle(flush) {
      if (flush > settled) settled = flush;
    },
    release() {
      if (held.length === 0) return;
      const ready = held.filter((draft) => draft.after <= settled);
      if (ready.length === 0) return;
      held = held.filter((draft) => draft.after > settled);
      if (deps.retired()) return;
      hub.publish(
        ready.map(({ data, createdAt }) => ({ runId, seq: units.seq, type: 'draft' as const, data, createdAt })),
      );
    },
    drop() {
      held = [];
    },
  };
}
