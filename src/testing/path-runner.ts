/**
 * Drives one model path through the real runtime on a real SQLite file. Every actor is held
 * at its gate until the path says so; at each step the persisted run (status, stop reason,
 * pending approval, ledger) and the event log must agree with the state the model predicts.
 * With `restoreEveryStep`, the runtime is closed and reopened from the file before each event.
 */
import { stateName, statusOf } from '../../machines/run-status.js';
import { SETTLED_STATUSES } from '../../machines/types.js';
import type { RunMachineDefinition } from '../../machines/variants.js';
import type { Run } from '../runtime/model/types.js';
import type { GateHit } from './gates.js';
import { checkLedger, checkSnapshot, poll, SETTLE_MS, statesOf, takeActor } from './path-checks.js';
import { applyPathEvent } from './path-events.js';
import { openPathSession, type PathSession } from './path-session.js';
import type { RunPath, RunSnapshot } from './run-model.js';

/** What a path run ended with, for comparing a straight run with a restored one. */
export interface PathOutcome {
  runId: string;
  /** The `to` of every `state` event, in order. */
  states: string[];
  final: Run;
  effects: string[];
  ledger: string[];
  restarts: number;
}

const SETTLED: ReadonlySet<string> = new Set(SETTLED_STATUSES);

/** Runs one path; resolves with its outcome or rejects with the first mismatch. */
export async function runPath(
  path: RunPath,
  options: { database: string; restoreEveryStep?: boolean; machine?: RunMachineDefinition },
): Promise<PathOutcome> {
  const session = await openPathSession(path, options);
  const predicted: string[] = [];
  const label = (i: number) =>
    `step ${i} (${path.steps[i]?.event.type ?? 'end'} from ${path.steps[i] ? stateName(path.steps[i].before.value) : 'end'})`;

  const run = await session.runtime.start({ input: 'model path', options: session.scenario.options });
  const checkpoint = (expected: RunSnapshot, where: string) =>
    checkSnapshot(session.runtime, run.id, expected, predicted, session.scenario.effects, where);
  const take = (step: RunPath['steps'][number], where: string) => takeActor(session.gates, step, where);

  try {
    // An actor an event left held (an operator's pause), for the next event to take.
    let carried: GateHit | undefined;
    for (const [i, step] of path.steps.entries()) {
      const { event, before } = step;
      const where = label(i);
      if (event.type !== 'start') {
        const held = statusOf(before.value) === 'planning' || statusOf(before.value) === 'executing';
        let hit = held ? (carried ?? (await take(step, where))) : undefined;
        carried = undefined;
        await checkpoint(before, where);
        if (options.restoreEveryStep) {
          await session.restart();
          hit = held ? await take(step, `${where} after restore`) : undefined;
          await checkpoint(before, `${where} after restore`);
        }
        carried = await applyPathEvent(session, run.id, step, hit, where);
      }
      if (statusOf(step.after.value) !== statusOf(before.value)) predicted.push(statusOf(step.after.value));
    }
    const last = path.steps.at(-1)!;
    let held: GateHit | undefined;
    const lastStatus = statusOf(last.after.value);
    if (lastStatus === 'planning' || lastStatus === 'executing') {
      held = carried ?? (await take({ ...last, before: last.after }, 'end'));
    }
    await checkpoint(last.after, 'end');
    // Past the path: let the run go on until it settles, so what the last event set in motion
    // (an approved call, a resumed step) is checked too.
    held?.release();
    await settle(session, run.id);
    const runtime = session.runtime;
    return {
      runId: run.id,
      states: await statesOf(runtime, run.id),
      final: await runtime.get(run.id),
      effects: [...session.scenario.effects],
      ledger: (await runtime.toolCalls(run.id)).map((call) => `${call.tool}:${call.status}`),
      restarts: session.restarts,
    };
  } finally {
    await session.runtime.close();
  }
}

/** Lets every actor the run still starts go until the run settles, then checks the ledger. */
async function settle(session: PathSession, runId: string): Promise<void> {
  const { gates, runtime } = session;
  for (let n = 0; n < 20; n += 1) {
    const now = await poll(
      async () => ({ held: gates.held, status: (await runtime.get(runId)).status }),
      (v) => v.held > 0 || SETTLED.has(v.status),
      (v) => `drain: the run neither settles nor moves (status ${v.status})`,
    );
    if (now.held === 0) break;
    (await gates.next(SETTLE_MS)).release();
  }
  await checkLedger(runtime, runId, session.scenario.effects, 'after the drain');
}
