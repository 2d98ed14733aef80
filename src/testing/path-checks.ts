/**
 * What `runPath` checks at each step: the actor at its gate is the one the step expects, and the
 * persisted run (status, transitions, stop reason, pending approval, ledger) agrees with the
 * state the model predicts. Each check waits for the file to catch up, within `SETTLE_MS`.
 */
import { statusOf } from '../../machines/run-status.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Gates, GateHit } from './gates.js';
import type { RunPath, RunSnapshot } from './run-model.js';

/** A path step whose expectation the runtime did not meet. */
export class PathMismatchError extends Error {}

/** How long a check waits for the run to reach what the model predicts. */
export const SETTLE_MS = 5_000;

/** Reads until `ok`, or fails with what the last read `describe`s once `within` (ms) passed. */
export async function poll<T>(
  read: () => T | Promise<T>,
  ok: (value: T) => boolean,
  describe: (value: T) => string,
  within = SETTLE_MS,
): Promise<T> {
  const deadline = Date.now() + within;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new PathMismatchError(describe(value));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Takes the next actor at its gate, checking it is the one the step expects. */
export async function takeActor(gates: Gates, step: RunPath['steps'][number], where: string): Promise<GateHit> {
  const hit = await gates.next(SETTLE_MS);
  const actor = statusOf(step.before.value) === 'planning' ? 'planner' : 'executor';
  if (hit.actor !== actor || hit.stepIndex !== step.before.context.stepIndex) {
    throw new PathMismatchError(
      `${where}: expected the ${actor} of step ${step.before.context.stepIndex}, got the ${hit.actor} of step ${hit.stepIndex}`,
    );
  }
  return hit;
}

/** Waits until the file shows `expected`, then checks everything else against the model. */
export async function checkSnapshot(
  runtime: Runtime,
  runId: string,
  expected: RunSnapshot,
  predicted: readonly string[],
  effects: string[],
  where: string,
): Promise<void> {
  const status = statusOf(expected.value);
  const persisted = await poll(
    () => runtime.get(runId),
    (r) => r.status === status,
    (r) => `${where}: expected status '${status}', the file says '${r.status}'`,
  );
  await poll(
    () => statesOf(runtime, runId),
    (s) => s.join() === predicted.join(),
    (s) => `${where}: expected transitions [${predicted.join(', ')}], the log has [${s.join(', ')}]`,
  );
  if (persisted.stopReason !== expected.context.stopReason) {
    throw new PathMismatchError(
      `${where}: expected stop reason ${expected.context.stopReason}, got ${persisted.stopReason}`,
    );
  }
  if (persisted.waitReason !== expected.context.waitReason) {
    throw new PathMismatchError(
      `${where}: expected wait reason ${expected.context.waitReason}, got ${persisted.waitReason}`,
    );
  }
  if ((persisted.pendingApprovalId === null) !== (expected.context.pendingApprovalId === null)) {
    throw new PathMismatchError(`${where}: pending approval is ${persisted.pendingApprovalId ?? 'none'}`);
  }
  if (persisted.pendingApprovalId) {
    const approval = (await runtime.approvals(runId)).find((a) => a.id === persisted.pendingApprovalId);
    if (approval?.status !== 'pending') throw new PathMismatchError(`${where}: the pending approval is not open`);
  }
  await checkLedger(runtime, runId, effects, where);
}

/** The `to` of every `state` event of the run, checking the log has no gap in its sequence. */
export async function statesOf(runtime: Runtime, runId: string): Promise<string[]> {
  const events = await runtime.readEvents(runId, { limit: 10_000 });
  events.forEach((event, i) => {
    if (event.seq !== i + 1) throw new PathMismatchError(`event ${i + 1} of run '${runId}' has seq ${event.seq}`);
  });
  return events.filter((e) => e.type === 'state').map((e) => String(e.data.to));
}

/** The ledger and the outside world agree, no effect happened twice, approved calls ran, given ones did not. */
export async function checkLedger(runtime: Runtime, runId: string, effects: string[], where: string): Promise<void> {
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
    // A call of an agent tool has no effect of its own: its child run did the work.
    if (row.effect === 'read' || row.childRunId) continue;
    const happened = effects.includes(`${row.tool}:${row.id}`);
    if (row.result?.given) {
      // A person gave this call's result: it never ran.
      if (happened) throw new PathMismatchError(`${where}: ${row.id} had its effect, but a person gave its result`);
      if (row.status !== 'succeeded')
        throw new PathMismatchError(`${where}: ${row.id} was given, but is ${row.status}`);
      continue;
    }
    if (row.status === 'succeeded' && !happened) {
      throw new PathMismatchError(`${where}: ledger says ${row.id} succeeded, but it had no effect`);
    }
    // A call waiting on its work elsewhere (a task) had it started: the work goes on.
    const working = row.status === 'waiting' && row.handle != null;
    if (happened && !working && !['succeeded', 'started', 'unknown'].includes(row.status)) {
      throw new PathMismatchError(`${where}: ${row.id} had its effect, but the ledger says ${row.status}`);
    }
  }
}
