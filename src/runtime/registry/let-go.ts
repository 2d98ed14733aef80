/**
 * How a runtime lets go of a live run: a run durably waiting for a human leaves memory (and its
 * lease, so a decision anywhere may load it); a run whose lease another runtime took is stopped
 * at once; an API-only runtime hands a run it acted on to the workers; a cancel another runtime
 * asked of a run driven here is carried out.
 */
import { createFailure } from '../../failure.js';
import type { HeldRun, Store } from '../../store/index.js';
import { carryOutCancel } from './cancel-request.js';
import { carryOutPause } from './pause-request.js';
import type { LiveRun } from '../drive/env.js';
import type { EventHub } from '../model/event-hub.js';
import type { RunDriver } from '../drive/run-driver.js';
import { wakeAtOf } from '../drive/wake-at.js';

/** What letting go needs from the registry. */
export interface LetGoDeps {
  live: Map<string, LiveRun>;
  store: Store;
  hub: EventHub;
  owner: string;
  isClosed(): boolean;
  /** A waiting run left memory: it must be loaded again at `at` (null: never). */
  parked(at: number | null, runId: string, polled: boolean): void;
}

/** The registry's ways of letting go of a run. */
export function createLetGo(deps: LetGoDeps) {
  const { live, store, hub, owner } = deps;

  /** A run durably waiting for a human, with nothing under way, leaves memory. */
  function evict(driver: RunDriver): void {
    const run = live.get(driver.runId);
    if (deps.isClosed() || run?.driver !== driver || !driver.idle || driver.status !== 'waiting_human') return;
    // A poll of its task under way stages its outcome on this driver.
    if (run.polling) return;
    const approvalId = driver.context().pendingApprovalId;
    const approval = approvalId ? driver.memory.approvals.get(approvalId) : undefined;
    // A decision committed and not yet applied keeps the run here until it is.
    if (approval?.status !== 'pending') return;
    live.delete(driver.runId);
    driver.stop();
    // Free for whichever runtime the decision reaches first.
    void store.releaseLease(driver.runId, owner, driver.epoch).catch(() => undefined);
    // A run waiting on its call's work elsewhere is this runtime's to poll: it holds the process open.
    deps.parked(wakeAtOf(driver.context(), driver.memory.approvals), driver.runId, approval.kind === 'task');
  }

  /** Carries out what another runtime asked of a run driven here: a cancel, else a pause (`cancel-request.ts`, `pause-request.ts`). */
  function asked(held: HeldRun): void {
    const run = live.get(held.id);
    if (!run) return;
    if (held.cancel_requested) carryOutCancel(run.driver, held.cancel_requested);
    else if (held.pause_requested) carryOutPause(run.driver, held.pause_requested);
  }

  /** Runs whose lease this runtime lost (another worker claimed them): stopped here at once, their calls aborted. */
  function lose(ids: readonly string[]): void {
    for (const id of ids) {
      const run = live.get(id);
      if (!run || run.driver.retired) continue;
      live.delete(id);
      run.driver.stop();
      hub.fail(
        id,
        createFailure('run.version_conflict', `Run '${id}' is driven by another runtime now: this one lost its lease`),
      );
    }
  }

  /**
   * Lets another runtime drive a run this one only acted on (an API process that drives no
   * runs, after a decision or an event): once what is buffered is durable, the driver stops and
   * the lease is released; a worker claims the run.
   */
  async function handOff(runId: string): Promise<void> {
    const run = live.get(runId);
    if (!run) return;
    await run.driver.flush().catch(() => undefined);
    if (live.get(runId) !== run || run.driver.retired) return;
    live.delete(runId);
    run.driver.stop();
    await store.releaseLease(runId, owner, run.driver.epoch);
  }

  return { evict, lose, handOff, asked };
}
