/**
 * The events a caller sends a run from outside: `cancel()` and `send()`. Each is refused with
 * `run.invalid_transition`, changing nothing, when the run's state does not take it; each
 * resolves once what it changed is durable. A run another runtime drives is cancelled through
 * that runtime (`cancel-request.ts`); a quarantined one is ended from its row alone.
 */
import { QUEUED_STATUS } from '../../../machines/types.js';
import { cancelQueuedRun } from './session-queue.js';
import type { SnapshotFrom } from 'xstate';
import { runEventSchema } from '../../../machines/events.js';
import type { RunMachine } from '../../../machines/run-machine.js';
import { stateName } from '../../../machines/run-status.js';
import type { RunEvent } from '../../../machines/types.js';
import { BatonError, fail } from '../../failure.js';
import type { Store } from '../../store/index.js';
import type { LiveRun } from '../drive/env.js';
import { endQuarantinedRun } from '../drive/quarantine.js';
import { refuseUnearnedSuccess } from '../drive/terminal-rule.js';
import type { EventHub } from '../model/event-hub.js';
import type { Run } from '../model/types.js';
import { assertWellFormed } from '../model/well-formed.js';
import { cancelElsewhere } from './cancel-request.js';
import type { RunRegistry } from './run-registry.js';
import { damageOfUnfinished } from '../drive/quarantine.js';

/** What the commands need from their runtime. */
export interface RunCommandsDeps {
  store: Store;
  hub: EventHub;
  registry: Pick<RunRegistry, 'has' | 'load' | 'peek' | 'forget'>;
  leaseMs: number;
  assertOpen(): void;
  isClosed(): boolean;
  /** Lets a worker drive the run, once the event is durable (an API-only runtime). */
  handOffUnlessDriving(runId: string): Promise<void>;
  /** The run as `Runtime.get` reports it. */
  get(runId: string): Promise<Run>;
  /** Ends the children still active of a run that ended (agents called as tools), and waits for them. */
  endChildren?(runId: string): Promise<void>;
}

/** The runtime's `cancel` and `send` (see `Runtime`). */
export interface RunCommands {
  cancel(runId: string, opts?: { reason?: string; compensate?: boolean }): Promise<Run>;
  send(runId: string, event: unknown): Promise<Run>;
}

/** Refuses an event the run's state does not take, naming both. */
function refuseUntaken(runId: string, snapshot: SnapshotFrom<RunMachine>, event: RunEvent): void {
  if (snapshot.can(event)) return;
  fail('run.invalid_transition', `Run '${runId}' in state '${stateName(snapshot.value)}' cannot take '${event.type}'`, {
    details: { state: snapshot.value, event: event.type },
  });
}

/** Delivers an event the live run's state takes (and refuses any other). */
function deliver(run: LiveRun, event: RunEvent): void {
  refuseUntaken(run.driver.runId, run.driver.actor.getSnapshot(), event);
  run.driver.actor.send(event);
}

/** Creates the command members of a runtime. */
export function createRunCommands(deps: RunCommandsDeps): RunCommands {
  const { store, registry } = deps;

  return {
    /** Cancels a run; it ends `failed` with `cancelled` (after undoing its calls, with `compensate`); a running tool is aborted. */
    async cancel(runId, opts = {}) {
      deps.assertOpen();
      assertWellFormed(opts, 'The cancel request');
      // A quarantined run cannot be loaded; an operator still ends it, from its row alone.
      const row = registry.has(runId) ? undefined : await store.getRun(runId);
      const damage = damageOfUnfinished(row);
      if (row && damage) {
        await endQuarantinedRun(store, deps.hub, row, damage, opts.reason);
        registry.forget(runId);
        return deps.get(runId);
      }
      // A queued run never started: it ends from its row (unless it left the queue meanwhile).
      if (row?.status === QUEUED_STATUS && (await cancelQueuedRun(store, deps.hub, row, opts.reason))) {
        return deps.get(runId);
      }
      let run: LiveRun;
      try {
        run = await registry.load(runId, 'cancel');
      } catch (error) {
        if (!(error instanceof BatonError) || error.code !== 'run.version_conflict') throw error;
        return cancelElsewhere(runId, opts, {
          store,
          leaseMs: deps.leaseMs,
          get: deps.get,
          isClosed: deps.isClosed,
        });
      }
      deliver(run, {
        type: 'cancel',
        ...(opts.reason ? { reason: opts.reason } : {}),
        ...(opts.compensate ? { compensate: true } : {}),
      });
      // A cancel the database refused is the caller's to know: the run is as it was.
      await run.driver.flush();
      await deps.handOffUnlessDriving(runId);
      const ended = await deps.get(runId);
      // Its children end with it before the caller is answered (their end was asked durably already).
      if (ended.children.length > 0 && (ended.status === 'failed' || ended.status === 'succeeded')) {
        await deps.endChildren?.(runId);
        return deps.get(runId);
      }
      return ended;
    },

    /**
     * Delivers a machine event to a run, as if one of its actors had produced it: for tools
     * and tests. An event the run's state does not take is refused with
     * `run.invalid_transition` and changes nothing.
     */
    async send(runId, event) {
      deps.assertOpen();
      const parsed = runEventSchema.safeParse(event);
      if (!parsed.success) fail('input.invalid', 'Invalid run event', { details: { issues: parsed.error.issues } });
      assertWellFormed(parsed.data, 'The event');
      // A run in the file is asked first: an event it does not take must not even load it.
      const stored = await registry.peek(runId, parsed.data.type);
      if (stored) refuseUntaken(runId, stored, parsed.data);
      const run = await registry.load(runId, parsed.data.type);
      // An actor's outcome sent from outside is held to what the actor itself checks.
      refuseUnearnedSuccess(run.driver, run.driver.actor.getSnapshot(), parsed.data);
      deliver(run, parsed.data);
      await run.driver.flush();
      await deps.handOffUnlessDriving(runId);
      return deps.get(runId);
    },
  };
}
