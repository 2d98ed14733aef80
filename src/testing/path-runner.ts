/**
 * Drives one model path through the real runtime on a real SQLite file. Every actor is held
 * at its gate until the path says so; at each step the persisted run (status, stop reason,
 * pending approval, ledger) and the event log must agree with the state the model predicts.
 * With `restoreEveryStep`, the runtime is closed and reopened from the file before each event.
 */
import { stateName, statusOf } from '../../machines/run-status.js';
import type { RunMachineDefinition } from '../../machines/variants.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import type { Run } from '../runtime/model/types.js';
import { createGates, type GateHit } from './gates.js';
import { createPathScenario } from './path-scenario.js';
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

/** A path step whose expectation the runtime did not meet. */
export class PathMismatchError extends Error {}

const SETTLE_MS = 5_000;
const SETTLED: ReadonlySet<string> = new Set(['succeeded', 'failed', 'waiting_human']);

async function poll<T>(
  read: () => T | Promise<T>,
  ok: (value: T) => boolean,
  describe: (value: T) => string,
): Promise<T> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new PathMismatchError(describe(value));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs one path; resolves with its outcome or rejects with the first mismatch. */
export async function runPath(
  path: RunPath,
  options: { database: string; restoreEveryStep?: boolean; machine?: RunMachineDefinition },
): Promise<PathOutcome> {
  const scenario = createPathScenario(path);
  const gates = createGates();
  const open = () =>
    createRuntime({
      database: options.database,
      planner: scenario.planner,
      tools: scenario.tools,
      policy: scenario.policy,
      hooks: gates.hooks,
      ...(options.machine ? { machine: options.machine } : {}),
    });
  let runtime: Runtime = open();
  if ((await runtime.list({ limit: 1 })).runs.length > 0) {
    await runtime.close();
    throw new Error(`runPath needs a fresh database file: '${options.database}' already has runs`);
  }
  let restarts = 0;
  const restart = async () => {
    gates.clear();
    await runtime.close();
    runtime = open();
    restarts += 1;
  };
  const predicted: string[] = [];
  const label = (i: number) =>
    `step ${i} (${path.steps[i]?.event.type ?? 'end'} from ${path.steps[i] ? stateName(path.steps[i].before.value) : 'end'})`;

  const run = await runtime.start({
    input: 'model path',
    options: { maxSteps: scenario.maxSteps, budget: scenario.budget },
  });

  /** Waits until the file shows `expected`, then checks everything else against the model. */
  const checkpoint = async (expected: RunSnapshot, where: string) => {
    const status = statusOf(expected.value);
    const persisted = await poll(
      () => runtime.get(run.id),
      (r) => r.status === status,
      (r) => `${where}: expected status '${status}', the file says '${r.status}'`,
    );
    await poll(
      () => statesOf(runtime, run.id),
      (s) => s.join() === predicted.join(),
      (s) => `${where}: expected transitions [${predicted.join(', ')}], the log has [${s.join(', ')}]`,
    );
    if (persisted.stopReason !== expected.context.stopReason) {
      throw new PathMismatchError(
        `${where}: expected stop reason ${expected.context.stopReason}, got ${persisted.stopReason}`,
      );
    }
    if ((persisted.pendingApprovalId === null) !== (expected.context.pendingApprovalId === null)) {
      throw new PathMismatchError(`${where}: pending approval is ${persisted.pendingApprovalId ?? 'none'}`);
    }
    if (persisted.pendingApprovalId) {
      const approval = (await runtime.approvals(run.id)).find((a) => a.id === persisted.pendingApprovalId);
      if (approval?.status !== 'pending') throw new PathMismatchError(`${where}: the pending approval is not open`);
    }
    await checkLedger(runtime, run.id, scenario.effects, where);
  };

  /** Takes the next actor at its gate, checking it is the one the step expects. */
  const take = async (step: RunPath['steps'][number], where: string): Promise<GateHit> => {
    const hit = await gates.next(SETTLE_MS);
    const actor = statusOf(step.before.value) === 'planning' ? 'planner' : 'executor';
    if (hit.actor !== actor || hit.stepIndex !== step.before.context.stepIndex) {
      throw new PathMismatchError(
        `${where}: expected the ${actor} of step ${step.before.context.stepIndex}, got the ${hit.actor} of step ${hit.stepIndex}`,
      );
    }
    return hit;
  };

  try {
    for (const [i, step] of path.steps.entries()) {
      const { event, before } = step;
      const where = label(i);
      if (event.type !== 'start') {
        const held = statusOf(before.value) === 'planning' || statusOf(before.value) === 'executing';
        let hit = held ? await take(step, where) : undefined;
        await checkpoint(before, where);
        if (options.restoreEveryStep) {
          await restart();
          hit = held ? await take(step, `${where} after restore`) : undefined;
          await checkpoint(before, `${where} after restore`);
        }
        switch (event.type) {
          case 'cancel':
            await runtime.cancel(run.id, event.compensate ? { compensate: true } : {});
            break;
          case 'timeout':
            break; // The persisted deadline fires while the actor is held.
          case 'approved': {
            // An uncertain side effect is run again; an ordinary approval takes no resolution.
            const waiting = await runtime.get(run.id);
            await runtime.approve(run.id, waiting.pendingApprovalId!, {
              by: event.by ?? 'model',
              ...(waiting.waitReason === 'uncertain_side_effect' ? { resolution: 'retry' as const } : {}),
            });
            break;
          }
          case 'rejected':
            await runtime.reject(run.id, (await runtime.get(run.id)).pendingApprovalId!, {
              by: event.by ?? 'model',
              terminate: event.terminate,
              ...(event.compensate ? { compensate: true } : {}),
            });
            break;
          case 'need_approval':
            hit!.release();
            if (event.reason === 'uncertain_side_effect') {
              // A crash inside the unsafe call: only a restart makes its outcome uncertain.
              await scenario.fragileStarted;
              await restart();
              (await take(step, `${where} after the crash`)).release();
            }
            break;
          default:
            hit!.release();
        }
      }
      if (statusOf(step.after.value) !== statusOf(before.value)) predicted.push(statusOf(step.after.value));
    }
    const last = path.steps.at(-1)!;
    let held: GateHit | undefined;
    const lastStatus = statusOf(last.after.value);
    if (lastStatus === 'planning' || lastStatus === 'executing') {
      held = await take({ ...last, before: last.after }, 'end');
    }
    await checkpoint(last.after, 'end');
    // Past the path: let the run go on until it settles, so what the last event set in motion
    // (an approved call, a resumed step) is checked too.
    held?.release();
    for (let n = 0; n < 20; n += 1) {
      const now = await poll(
        async () => ({ held: gates.held, status: (await runtime.get(run.id)).status }),
        (v) => v.held > 0 || SETTLED.has(v.status),
        (v) => `drain: the run neither settles nor moves (status ${v.status})`,
      );
      if (now.held === 0) break;
      (await gates.next(SETTLE_MS)).release();
    }
    await checkLedger(runtime, run.id, scenario.effects, 'after the drain');
    return {
      runId: run.id,
      states: await statesOf(runtime, run.id),
      final: await runtime.get(run.id),
      effects: [...scenario.effects],
      ledger: (await runtime.toolCalls(run.id)).map((call) => `${call.tool}:${call.status}`),
      restarts,
    };
  } finally {
    await runtime.close();
  }
}

async function statesOf(runtime: Runtime, runId: string): Promise<string[]> {
  const events = await runtime.readEvents(runId, { limit: 10_000 });
  events.forEach((event, i) => {
    if (event.seq !== i + 1) throw new PathMismatchError(`event ${i + 1} of run '${runId}' has seq ${event.seq}`);
  });
  return events.filter((e) => e.type === 'state').map((e) => String(e.data.to));
}

/** The ledger and the outside world agree, no effect happened twice, approved calls ran. */
async function checkLedger(runtime: Runtime, runId: string, effects: string[], where: string): Promise<void> {
  if (new Set(effects).size !== effects.length) throw new PathMismatchError(`${where}: an effect happened twice`);
  const rows = await runtime.toolCalls(runId);
  for (const approval of await runtime.approvals(runId)) {
    if (approval.status !== 'approved' || approval.kind !== 'tool') continue;
    for (const id of approval.toolCallIds) {
      const status = rows.find((row) => row.id === id)?.status;
      if (status === 'rejected' || status === 'skipped') {
        throw new PathMismatchError(`${where}: ${id} was approved, but the ledger says ${status}`);
      }
    }
  }
  for (const row of rows) {
    if (row.effect === 'read') continue;
    const happened = effects.includes(`${row.tool}:${row.id}`);
    if (row.status === 'succeeded' && !happened) {
      throw new PathMismatchError(`${where}: ledger says ${row.id} succeeded, but it had no effect`);
    }
    if (happened && !['succeeded', 'started', 'unknown'].includes(row.status)) {
      throw new PathMismatchError(`${where}: ${row.id} had its effect, but the ledger says ${row.status}`);
    }
  }
}
