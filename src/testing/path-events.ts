/**
 * How `runPath` makes the runtime take one event of the model: a person's call on the public
 * API (cancel, approve, reject), or letting the held actor go (and, for an uncertain side
 * effect, a crash inside the unsafe call).
 */
import type { GateHit } from './gates.js';
import { takeActor } from './path-checks.js';
import type { PathSession } from './path-session.js';
import type { RunPath } from './run-model.js';

/** Makes the run take the step's event; `hit` is the actor held at its gate, if any. */
export async function applyPathEvent(
  session: PathSession,
  runId: string,
  step: RunPath['steps'][number],
  hit: GateHit | undefined,
  where: string,
): Promise<void> {
  const { event } = step;
  const runtime = session.runtime;
  switch (event.type) {
    case 'cancel':
      await runtime.cancel(runId, event.compensate ? { compensate: true } : {});
      break;
    case 'timeout':
      break; // The persisted deadline fires while the actor is held.
    case 'approved': {
      // An uncertain side effect is run again; an ordinary approval takes no resolution.
      const waiting = await runtime.get(runId);
      await runtime.approve(runId, waiting.pendingApprovalId!, {
        by: event.by ?? 'model',
        ...(waiting.waitReason === 'uncertain_side_effect' ? { resolution: 'retry' as const } : {}),
      });
      break;
    }
    case 'rejected':
      await runtime.reject(runId, (await runtime.get(runId)).pendingApprovalId!, {
        by: event.by ?? 'model',
        terminate: event.terminate,
        ...(event.compensate ? { compensate: true } : {}),
      });
      break;
    case 'need_approval':
      hit!.release();
      if (event.reason === 'uncertain_side_effect') {
        // A crash inside the unsafe call: only a restart makes its outcome uncertain.
        await session.scenario.fragileStarted;
        await session.restart();
        (await takeActor(session.gates, step, `${where} after the crash`)).release();
      }
      break;
    default:
      hit!.release();
  }
}
