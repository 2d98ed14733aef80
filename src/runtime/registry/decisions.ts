/**
 * A person's decisions on a run's approvals, as `approve()` and `reject()` take them: the
 * decision is checked first (a decided approval always answers `approval.already_decided`),
 * the run is then loaded here (claimed), the decision committed, and an API-only runtime hands
 * the run to a worker to act on it.
 */
import { fail } from '../../failure.js';
import type { RuntimeEnv } from '../drive/env.js';
import { assertPendingApproval, decideApproval, type DecisionInput } from '../ledger/approvals.js';
import { toApproval } from '../model/rows.js';
import type { Approval, ApproveInput, RejectInput } from '../model/types.js';
import { assertWellFormed } from '../model/well-formed.js';
import type { RunRegistry } from './run-registry.js';

/** What deciding needs from its runtime. */
export interface DecisionsDeps {
  env: RuntimeEnv;
  registry: Pick<RunRegistry, 'load'>;
  /** False for an API-only runtime: the decision is recorded, a worker applies it. */
  drive: boolean;
  assertOpen(): void;
  /** Lets a worker drive the run, once the decision is durable (an API-only runtime). */
  handOffUnlessDriving(runId: string): Promise<void>;
}

/** The runtime's `approve` and `reject` (see `Runtime`). */
export interface Decisions {
  approve(runId: string, approvalId: string, decision: ApproveInput): Promise<Approval>;
  reject(runId: string, approvalId: string, decision: RejectInput): Promise<Approval>;
}

/** Creates the decision members of a runtime. */
export function createDecisions(deps: DecisionsDeps): Decisions {
  const { env, registry, drive } = deps;

  async function decide(runId: string, approvalId: string, input: DecisionInput): Promise<Approval> {
    const run = await registry.load(runId, input.approve ? 'approved' : 'rejected');
    const row = await decideApproval(env, run, approvalId, input, { apply: drive });
    await deps.handOffUnlessDriving(runId);
    return toApproval(row);
  }

  return {
    /** Approves a pending approval (for an uncertain call, `resolution` says retry or record as done). */
    async approve(runId, approvalId, decision) {
      deps.assertOpen();
      assertWellFormed(decision, 'The decision');
      const pending = await assertPendingApproval(env.store, runId, approvalId);
      if (decision.resolution !== undefined && pending.kind !== 'uncertain') {
        fail(
          'input.invalid',
          `Approval '${approvalId}' asks whether to run calls: 'resolution' applies only to an uncertain side effect`,
          { details: { resolution: decision.resolution } },
        );
      }
      return decide(runId, approvalId, {
        approve: true,
        by: decision.by,
        reason: decision.reason ?? null,
        resolution: decision.resolution,
      });
    },

    /** Rejects a pending approval: the model is told, or with `terminate` the run ends `rejected`. */
    async reject(runId, approvalId, decision) {
      deps.assertOpen();
      assertWellFormed(decision, 'The decision');
      await assertPendingApproval(env.store, runId, approvalId);
      return decide(runId, approvalId, {
        approve: false,
        by: decision.by,
        reason: decision.reason ?? null,
        terminate: decision.terminate,
        compensate: decision.compensate,
      });
    },
  };
}
