/**
 * Child runs: an agent called as a tool runs as a run of its own (its own ledger, events, budget),
 * started by its parent's call and driven here like any run. The child's id is its parent's call
 * id with `.child`, and it is created only if it does not exist, so no crash or retry starts two.
 * Its end reaches its parent three ways, whichever comes first (the wait's compare-and-set makes
 * one of them count): this runtime hands the outcome over as soon as the end is durable; the end's
 * own unit marks the parent due (`wake_at` 0), so a parent left waiting by a crash is woken; and
 * a parent that comes to wait (or is loaded) after its child ended looks at the child itself.
 */
import { DEFAULTS } from '../../defaults.js';
import { isTerminalStatus } from '../../../machines/run-status.js';
import { BatonError } from '../../failure.js';
import type { ChildStarter, LiveRun } from '../drive/env.js';
import { settleChildWait } from '../ledger/child-wait.js';
import { failpoint } from '../model/failpoints.js';
import { childRunId, childWaitId } from '../model/ids.js';
import { createChildStart, type ChildStartDeps } from './child-start.js';

/** What child runs need from their runtime. */
export interface ChildRunsDeps extends ChildStartDeps {
  /** Told of a delivery that failed (the parent is due in the file and is woken later). */
  onError(error: unknown, parentRunId: string): void;
}

/** How a run is cancelled (the runtime's `cancel`, bound once the runtime has it). */
export type CancelRun = (runId: string, opts: { reason?: string; compensate?: boolean }) => Promise<unknown>;

/** The child runs of one runtime: starting them, handing their ends to their parents, ending them with them. */
export interface ChildRuns extends ChildStarter {
  /**
   * A run driven here ended: its children still active are cancelled, newest first (with
   * compensation when the run was cancelled with it), wherever they are driven.
   */
  parentEnded(parent: LiveRun): void;
  /** A child loaded here whose parent has ended (its end came while no process drove the child): it is cancelled. */
  checkOrphan(child: LiveRun): void;
  /** Binds the runtime's cancel (made after the registry). */
  useCancel(cancel: CancelRun): void;
  /** Cancels the children still active of a run that ended, newest first, and resolves once each has. */
  endChildrenOf(parentRunId: string): Promise<void>;
  /** A child driven here ended (durably): its parent takes its outcome, if this runtime can load it. */
  ended(child: LiveRun & { parent: NonNullable<LiveRun['parent']> }): void;
  /** A parent waits on a child (it came to wait, or was loaded): if the child has ended, the parent takes it now. */
  check(parent: LiveRun): void;
}

/** Why a parent cannot take its child's outcome here, none of them a fault. */
const ELSEWHERE: ReadonlySet<string> = new Set([
  'run.version_conflict',
  'run.agent_mismatch',
  'run.invalid_transition',
  'run.closed',
]);

/** Creates the child runs of a runtime. */
export function createChildRuns(deps: ChildRunsDeps): ChildRuns {
  const { store, env, registry } = deps;

  const start = createChildStart(deps);

  /** Hands an ended child's outcome to its parent, if the parent waits on it and can be driven here. */
  async function deliver(parentRunId: string, callId: string): Promise<void> {
    const waitId = childWaitId(callId);
    const wait = await store.getApproval(waitId);
    if (!wait || wait.status !== 'pending') return;
    const child = await store.getRun(childRunId(callId));
    if (!child || !isTerminalStatus(child.status)) return;
    const parent = await registry.load(parentRunId, 'child_ended');
    await settleChildWait(env, parent, waitId, child);
  }

  function handOver(parentRunId: string, callId: string): void {
    deliver(parentRunId, callId).catch((error: unknown) => {
      // Driven by another runtime (or another agent's), or ended meanwhile: the parent is due in
      // the file (its child's end marked it so) and whoever drives it takes the outcome.
      if (error instanceof BatonError && ELSEWHERE.has(error.code)) return;
      deps.onError(error, parentRunId);
    });
  }

  let cancel: CancelRun | undefined;

  /** The children a run's calls started, newest first. */
  function childrenOf(parent: LiveRun): string[] {
    return parent.driver.memory
      .toolCalls()
      .filter((row) => row.child_run_id !== null)
      .sort((a, b) => b.step_index - a.step_index || b.call_index - a.call_index)
      .map((row) => row.child_run_id!);
  }

  /** Resolves once the run has ended (read from the file: it may be driven anywhere), or when aborted. */
  async function ended(runId: string, signal: AbortSignal): Promise<void> {
    for (let pause = 10; !signal.aborted; pause = Math.min(pause * 2, 500)) {
      const row = await store.getRun(runId);
      if (!row || isTerminalStatus(row.status)) return;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** Cancels the active children of a run that ended, newest first, one after another. */
  async function endChildren(parentRunId: string, childIds: readonly string[], compensate: boolean): Promise<void> {
    const parent = await store.getRun(parentRunId);
    const why = parent?.stop_reason ? ` (${parent.stop_reason})` : '';
    for (const id of childIds) {
      const child = await store.getRun(id);
      if (!child || isTerminalStatus(child.status) || !cancel) continue;
      await cancel(id, {
        reason: compensate
          ? `its parent run '${parentRunId}' undoes what it did`
          : `its parent run '${parentRunId}' ended${why}`,
        ...(compensate ? { compensate: true } : {}),
      }).catch((error: unknown) => {
        // Ended meanwhile (by itself, or by another runtime), or this runtime is closing.
        if (!(error instanceof BatonError && ELSEWHERE.has(error.code))) throw error;
      });
    }
  }

  /**
   * Cancels the active runs below a run that ended and resolves once they have ended (cancelled
   * here, or by the cascade already under way; one driven elsewhere is waited for until `patience`).
   */
  async function endSubtree(parentRunId: string, patience: AbortSignal, depth: number): Promise<void> {
    if (depth >= DEFAULTS.treeWalkSteps) return;
    const rows = await store.listRuns({ parentRunId, limit: 100 });
    const ids = rows.filter((row) => !isTerminalStatus(row.status)).map((row) => row.id);
    await endChildren(parentRunId, ids, false);
    for (const id of ids) {
      await ended(id, patience);
      await endSubtree(id, patience, depth + 1);
    }
  }

  return {
    start,
    useCancel(given) {
      cancel = given;
    },
    endChildrenOf: (parentRunId) => endSubtree(parentRunId, AbortSignal.timeout(2 * deps.leaseMs), 0),
    parentEnded(parent) {
      const ids = childrenOf(parent);
      if (ids.length === 0) return;
      endChildren(parent.driver.runId, ids, false).catch((error: unknown) => deps.onError(error, parent.driver.runId));
    },
    async undoChildren(parent, signal) {
      const ids = childrenOf(parent);
      await endChildren(parent.driver.runId, ids, true);
      for (const id of ids) await ended(id, signal);
    },
    checkOrphan(child) {
      const parentId = child.parent?.runId;
      if (!parentId) return;
      void store
        .getRun(parentId)
        .then((parent) => {
          if (!parent || !isTerminalStatus(parent.status) || !cancel) return;
          return cancel(child.driver.runId, {
            reason: `its parent run '${parentId}' ended${parent.stop_reason ? ` (${parent.stop_reason})` : ''}`,
          });
        })
        .catch((error: unknown) => {
          if (!(error instanceof BatonError && ELSEWHERE.has(error.code))) deps.onError(error, parentId);
        });
    },
    ended(child) {
      failpoint('child.ended');
      handOver(child.parent.runId, child.parent.callId);
    },
    check(parent) {
      const ctx = parent.driver.context();
      if (ctx.waitReason !== 'child' || !ctx.pendingApprovalId) return;
      const wait = parent.driver.memory.approvals.get(ctx.pendingApprovalId);
      if (wait?.kind !== 'child' || wait.status !== 'pending') return;
      const [callId] = JSON.parse(wait.tool_call_ids) as string[];
      if (callId) handOver(parent.driver.runId, callId);
    },
  };
}
