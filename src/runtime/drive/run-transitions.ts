/**
 * A run's transitions as its driver records them. Each one marks the snapshot for saving and
 * flushes; a change of public status is a `state` event, and a move to a terminal status first
 * settles the calls it cut off, so they commit in the same write as the run's end.
 */
import type { Actor } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import { statusOf } from '../../../machines/run-status.js';
import type { RunStatus } from '../../../machines/types.js';
import { toFailure, type Failure } from '../../failure.js';
import type { LogEventType } from '../model/types.js';
import type { CutOffCalls } from './cut-off-calls.js';
import { TERMINAL, type SnapshotSaver } from './snapshot-saver.js';
import { stateEventData } from './state-event.js';

/** What recording a run's transitions needs from its driver. */
export interface RunTransitionsDeps {
  actor: Actor<RunMachine>;
  cutOff: CutOffCalls;
  snapshots: SnapshotSaver;
  emit(type: LogEventType, data: Record<string, unknown>): void;
  /** Called in the transition to `succeeded`. */
  succeeded(): void;
  /** Called in the transition to a terminal status, after the calls it cut off are settled. */
  ended(): void;
  /** Called in a transition into a wait of the whole run, a budget's or a pause (its row is made once, with the transition). */
  runWait(approvalId: string): void;
  flush(): Promise<void>;
  /** The actor failed: the run cannot go on here. */
  failed(failure: Failure): void;
}

/** The transitions of one run. */
export interface RunTransitions {
  /** The last public status seen (a variant's nested state counts as its top state). */
  readonly status: RunStatus;
  /** Subscribes to the actor and starts it. */
  start(): void;
}

/** Creates the record of one run's transitions. */
export function createRunTransitions(deps: RunTransitionsDeps): RunTransitions {
  const { actor, cutOff, snapshots } = deps;
  let last = statusOf(actor.getSnapshot().value);
  // A pause asked and not reached: its taking is logged once.
  let pauseAsk = actor.getSnapshot().context.pauseAsk ?? null;
  return {
    get status() {
      return last;
    },
    start() {
      actor.subscribe({
        next(snapshot) {
          const status = statusOf(snapshot.value);
          const asked = snapshot.context.pauseAsk ?? null;
          if (asked && asked !== pauseAsk) deps.emit('pause', { reason: asked.reason, by: asked.by });
          pauseAsk = asked;
          if (status !== last) {
            const ctx = snapshot.context;
            if (TERMINAL.has(status)) cutOff.settle(ctx.stopReason);
            deps.emit('state', stateEventData(last, status, ctx, cutOff));
            if (status === 'succeeded') deps.succeeded();
            if (TERMINAL.has(status)) deps.ended();
            const runWait = ctx.waitReason === 'budget' || ctx.waitReason === 'paused';
            if (status === 'waiting_human' && runWait && ctx.pendingApprovalId) deps.runWait(ctx.pendingApprovalId);
            last = status;
          }
          snapshots.dirty = true;
          deps.flush().catch(() => undefined);
        },
        error(error) {
          deps.failed(toFailure(error));
        },
      });
      actor.start();
    },
  };
}
