/**
 * An operator's pause and resume. `pause` stores the ask on the run (so whichever runtime drives
 * it, or loads it next, carries it out) and gives it at once to a run driven here; the run stops
 * at its next step boundary — a call in flight finishes and is recorded first — and waits with
 * reason `paused`, holding no memory, until `resume` (a decision on that wait) or a cancel.
 */
import { statusOf } from '../../../machines/run-status.js';
import { fail } from '../../failure.js';
import type { Store } from '../../store/index.js';
import { pauseRequest } from '../model/pause-ask.js';
import type { Approval, HumanDecision, Run } from '../model/types.js';
import { assertWellFormed } from '../model/well-formed.js';
import { carryOutPause } from './pause-request.js';
import type { RunRegistry } from './run-registry.js';

/** What pausing needs from its runtime. */
export interface PauseCommandsDeps {
  store: Store;
  registry: Pick<RunRegistry, 'has' | 'load' | 'peek'>;
  assertOpen(): void;
  get(runId: string): Promise<Run>;
  decide(runId: string, approvalId: string, decision: HumanDecision): Promise<Approval>;
}

/** Who pauses or resumes, and why (both as the operator says; neither is checked against anyone). */
export interface PauseOptions {
  reason?: string;
  by?: string;
}

/** The runtime's `pause` and `resume` (see `Runtime`). */
export interface PauseCommands {
  pause(runId: string, opts?: PauseOptions): Promise<Run>;
  resume(runId: string, opts?: PauseOptions): Promise<Run>;
}

function checkOptions(opts: PauseOptions, what: string): void {
  assertWellFormed(opts, what);
  for (const [key, max] of [
    ['reason', 2000],
    ['by', 200],
  ] as const) {
    const value = opts[key];
    if (value !== undefined && (typeof value !== 'string' || value.length > max)) {
      fail('input.invalid', `${what}: '${key}' must be a string of at most ${max} characters`, {
        details: { field: key },
      });
    }
  }
}

/** Creates the pause members of a runtime. */
export function createPauseCommands(deps: PauseCommandsDeps): PauseCommands {
  const { store, registry } = deps;

  /** Refuses a pause the run's state does not take, saying why; true when one is asked already. */
  async function assertPausable(runId: string): Promise<boolean> {
    const row = await store.getRun(runId);
    if (!row) return (await deps.get(runId), false);
    if (row.pause_requested) return true;
    const snapshot = registry.has(runId)
      ? (await registry.load(runId, 'pause')).driver.actor.getSnapshot()
      : await registry.peek(runId, 'pause');
    if (!snapshot) return false;
    if (snapshot.context.pauseAsk) return true;
    if (snapshot.can({ type: 'pause' })) return false;
    const why =
      snapshot.context.waitReason === 'paused'
        ? 'it is paused already: resume it, or cancel it'
        : snapshot.context.compensation
          ? 'it is undoing its calls before it ends'
          : `its state '${statusOf(snapshot.value)}' does not take it`;
    return fail('run.invalid_transition', `Run '${runId}' cannot be paused: ${why}`, {
      details: { state: statusOf(snapshot.value), event: 'pause' },
    });
  }

  return {
    async pause(runId, opts = {}) {
      deps.assertOpen();
      checkOptions(opts, 'The pause');
      if (await assertPausable(runId)) return deps.get(runId);
      const request = pauseRequest(opts.reason, opts.by);
      // Stored first: whoever drives the run (here, another process, the next to load it) carries it out.
      if (!(await store.requestPause(runId, request))) {
        // It ended (or another ask came first) in the meantime.
        await assertPausable(runId);
        return deps.get(runId);
      }
      if (registry.has(runId)) {
        const run = await registry.load(runId, 'pause');
        carryOutPause(run.driver, request);
        await run.driver.flush();
      }
      return deps.get(runId);
    },

    async resume(runId, opts = {}) {
      deps.assertOpen();
      checkOptions(opts, 'The resume');
      const run = await deps.get(runId);
      if (run.waitReason !== 'paused' || !run.pendingApprovalId) {
        const asked = run.pauseRequested ? ': its pause is asked and not reached yet' : '';
        fail('run.invalid_transition', `Run '${runId}' is not paused (it is ${run.status}${asked})`, {
          details: { state: run.status, event: 'resume' },
        });
      }
      await deps.decide(runId, run.pendingApprovalId, {
        decision: 'resume',
        by: opts.by ?? 'operator',
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      });
      return deps.get(runId);
    },
  };
}
