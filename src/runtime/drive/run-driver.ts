/**
 * A run driver owns one live run: its XState actor, its event numbering and its write buffer.
 * Every transition marks the run dirty and schedules a flush; a flush writes the buffered
 * ledger rows, the events and the latest snapshot in one compare-and-set unit of the shared
 * transaction. Actors flush before any side effect, so what they act on is already durable.
 */
import { createActor, type Actor, type InspectionEvent, type Snapshot, type StateValue } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import { statusOf } from '../../../machines/run-status.js';
import type { RunContext, RunInput, RunStatus } from '../../../machines/types.js';
import { BatonError, createFailure, toFailure, type Failure } from '../../failure.js';
import type { ApprovalRow, Store, ToolCallRow, UnitWriter } from '../../store/index.js';
import type { EventHub } from '../model/event-hub.js';
import { failpoint } from '../model/failpoints.js';
import { createRunMemory, type RunMemory } from './run-memory.js';
import type { RunEventName, RunEventRecord } from '../model/types.js';
import { toCompensationData, toRunCompensation } from '../model/event-data.js';
import { toErrorResult } from '../../tools/tool-result.js';
import { toSettledCall } from './settled-call.js';

/** What a driver needs from its runtime. */
export interface DriverDeps {
  store: Store;
  hub: EventHub;
  /** The runtime's lease owner id, carried with every write (PostgreSQL fences on it). */
  owner: string;
  /** The runtime's machine (Baton's or a checked variant), with its actors provided. */
  machine: RunMachine;
  /** The version stored with every snapshot this driver writes. */
  machineVersion: number;
  inspect?: ((event: InspectionEvent) => void) | undefined;
  /** Called in the transition to `succeeded`, to stage the answer's commit to the session. */
  onSucceeded(driver: RunDriver): void;
  /** Called once the run's terminal snapshot is durable, or when the driver breaks. */
  onRetired(driver: RunDriver, failure: Failure | null): void;
  /** Called when the run is durably waiting for a human with nothing left to write. */
  onIdleWaiting?(driver: RunDriver): void;
  /** Told of the events this driver committed, once durable (the runtime's tracing). */
  onCommitted?(events: readonly RunEventRecord[]): void;
}

/** Where a driver starts from: a new run's input, or a persisted snapshot. */
export type DriverOrigin =
  | { kind: 'new'; input: RunInput }
  | { kind: 'restore'; snapshot: string; version: number; lastSeq: number; epoch: number; memory: RunMemory };

/** The driver of one live run: its actor, its write buffer and its event numbering. */
export interface RunDriver {
  readonly runId: string;
  /** The run's XState actor (Baton's machine or the runtime's variant). */
  readonly actor: Actor<RunMachine>;
  /** The run's ledger as this process knows it, ahead of the file by what is buffered. */
  readonly memory: RunMemory;
  /** The machine's context now (not necessarily durable yet). */
  context(): RunContext;
  /** The last public status the driver saw (a variant's nested state counts as its top state). */
  readonly status: RunStatus;
  /** The epoch of this runtime's claim on the run; its writes carry it. */
  readonly epoch: number;
  /** This runtime claimed the run again (a lapsed lease taken back): later writes carry `epoch`. */
  reclaimed(epoch: number): void;
  /** True once the run is terminal and durable, or the driver broke or was stopped. */
  readonly retired: boolean;
  /** Nothing buffered, nothing changed since the last write, no write under way. */
  readonly idle: boolean;
  /** Buffers a write for the next flush; it runs with the unit's writer. */
  stage(op: (writer: UnitWriter) => void): void;
  /** Buffers a ledger row; `memory` shows it at once. */
  stageToolCall(row: ToolCallRow): void;
  /** Buffers a new approval; `memory` shows it at once. */
  stageApproval(row: ApprovalRow): void;
  /** The writer of the unit being written; only inside a staged op. */
  readonly writer: UnitWriter;
  /** Writes a ledger row at once; only inside a staged op. */
  writeToolCall(row: ToolCallRow): void;
  /** Buffers an event; it is numbered when written (seq follows commit order) and published once committed. */
  emit(type: RunEventName, data: Record<string, unknown>): void;
  /** Writes an event at once; only inside a staged op. */
  writeEvent(type: RunEventName, data: Record<string, unknown>): void;
  /** Publishes streamed model text at once: live only, never a row, never an answer. */
  publishDraft(data: Record<string, unknown>): void;
  /** Makes everything buffered so far durable (ops, events, the latest snapshot); resolves after the COMMIT. */
  flush(): Promise<void>;
  /** Subscribes to the actor and starts it. */
  start(): void;
  /** Settles calls still `started` (not compensations) as a run's end would: for a compensation that begins. */
  settleInterrupted(stopReason: string): void;
  /** Stops the actor without writing anything more (close, or a crash simulation). */
  stop(): void;
}

const TERMINAL: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed']);

/**
 * When a waiting run must be loaded again: its deadline, or the earliest durable delay of a
 * variant (`context.timers`), whichever comes first; null for never.
 */
export function wakeAtOf(context: RunContext): number | null {
  const timers = (context as RunContext & { timers?: Record<string, number> }).timers ?? {};
  const instants = [context.deadlineAt, ...Object.values(timers)].filter((at): at is number => typeof at === 'number');
  return instants.length === 0 ? null : Math.min(...instants);
}

/** Creates the driver of one run; call `start()` to run it. */
export function createDriver(deps: DriverDeps, runId: string, origin: DriverOrigin): RunDriver {
  const { store, hub } = deps;
  const actor: Actor<RunMachine> =
    origin.kind === 'new'
      ? createActor(deps.machine, { input: origin.input, inspect: deps.inspect })
      : createActor(deps.machine, {
          snapshot: JSON.parse(origin.snapshot) as Snapshot<unknown>,
          // A restored actor takes its context from the snapshot; input is not read.
          input: undefined as unknown as RunInput,
          inspect: deps.inspect,
        });

  let version = origin.kind === 'restore' ? origin.version : 0;
  let seq = origin.kind === 'restore' ? origin.lastSeq : 0;
  let buffer: ((writer: UnitWriter) => void)[] = [];
  /** The writer of the unit being written (set while `write` runs). */
  let unit: UnitWriter | null = null;
  const fence = { runId, owner: deps.owner, epoch: origin.kind === 'restore' ? origin.epoch : 0 };
  let written: RunEventRecord[] = [];
  let persistedJson = origin.kind === 'restore' ? origin.snapshot : '';
  let dirty = false;
  let pendingFlush: Promise<void> | null = null;
  // Flushes are numbered as they begin and settle in that order (one run's writes queue up).
  let flushesBegun = 0;
  let flushesSettled = 0;
  /** Drafts waiting for the flush `after` (and those before it) to publish its events. */
  let heldDrafts: { after: number; data: Record<string, unknown>; createdAt: number }[] = [];

  /** Publishes, in order, the drafts whose preceding events are out now. */
  function releaseDrafts(): void {
    const ready = heldDrafts.filter((draft) => draft.after <= flushesSettled);
    if (ready.length === 0) return;
    heldDrafts = heldDrafts.filter((draft) => draft.after > flushesSettled);
    if (retired) return;
    hub.publish(ready.map(({ data, createdAt }) => ({ runId, seq, type: 'draft' as const, data, createdAt })));
  }
  let retired = false;
  let stopped = false;
  let lastStatus = statusOf(actor.getSnapshot().value);
  const memory = origin.kind === 'restore' ? origin.memory : createRunMemory();

  function currentWriter(): UnitWriter {
    if (!unit) throw new Error(`Run '${runId}': a write outside its unit of work`);
    return unit;
  }

  function context(): RunContext {
    return actor.getSnapshot().context;
  }

  function writeEvent(type: RunEventName, data: Record<string, unknown>): void {
    const record: RunEventRecord = { runId, seq: seq + 1, type, data, createdAt: Date.now() };
    currentWriter().insertEvent({
      run_id: runId,
      seq: record.seq,
      type,
      data: JSON.stringify(data),
      created_at: record.createdAt,
    });
    seq += 1;
    written.push(record);
  }

  /** Writes the buffer, the events and the snapshot; runs inside the shared transaction. */
  function write(writer: UnitWriter): RunEventRecord[] {
    pendingFlush = null;
    // A stopped driver writes nothing more, as if the process had died here; whoever waits
    // on this flush learns that the runtime closed.
    if (stopped) throw new BatonError(createFailure('run.closed', `Run '${runId}' stopped before this write`));
    const ops = buffer;
    buffer = [];
    written = [];
    unit = writer;
    try {
      for (const op of ops) op(writer);
      saveSnapshot(writer);
    } finally {
      unit = null;
    }
    const committed = written;
    written = [];
    return committed;
  }

  /** The latest snapshot, if it changed since the last write (compare-and-set on the version). */
  function saveSnapshot(writer: UnitWriter): void {
    if (dirty) {
      dirty = false;
      const latest = actor.getPersistedSnapshot() as unknown as { context: RunContext; value: StateValue };
      const json = JSON.stringify(latest);
      if (json !== persistedJson) {
        const ctx = latest.context;
        const status = statusOf(latest.value);
        if (TERMINAL.has(status)) failpoint('run.terminal');
        writer.saveProgress({
          id: runId,
          expected_version: version,
          snapshot: json,
          status,
          stop_reason: ctx.stopReason,
          failure: ctx.failure ? JSON.stringify(TERMINAL.has(status) ? withUnknown(ctx.failure) : ctx.failure) : null,
          wait_reason: ctx.waitReason,
          pending_approval_id: ctx.pendingApprovalId,
          step_index: ctx.stepIndex,
          llm_calls: ctx.llmCalls,
          tool_calls: ctx.toolCalls,
          tokens: ctx.tokens,
          cost_usd: ctx.costUsd,
          machine_version: deps.machineVersion,
          wake_at: status === 'waiting_human' ? wakeAtOf(ctx) : null,
          compensation: ctx.compensation
            ? JSON.stringify(toRunCompensation(ctx.compensation, TERMINAL.has(status)))
            : null,
          updated_at: Date.now(),
        });
        version += 1;
        persistedJson = json;
      }
    }
  }

  /** Calls whose outcome a run that ended mid-call leaves unknown (see `settleOpenCalls`). */
  const unknownCalls: string[] = [];

  /** A terminal failure that names the calls whose outcome is unknown, if there are any. */
  function withUnknown(failure: Failure): Failure {
    if (unknownCalls.length === 0) return failure;
    return { ...failure, details: { ...failure.details, unknown_tool_calls: [...unknownCalls] } };
  }

  /**
   * A run that ends while a call runs (cancelled, timed out) settles that call in the same write
   * as its last transition, so no row stays `started` in a finished run: a `read` call failed,
   * any other `unknown`, since its effect may still happen after the abort.
   */
  function settleOpenCalls(stopReason: string | null, only: (row: ToolCallRow) => boolean = () => true): void {
    const open = memory.toolCalls().filter((row) => row.status === 'started' && only(row));
    for (const row of open) {
      const read = row.effect === 'read';
      const why = `the run ended (${stopReason ?? 'stopped'}) while it ran`;
      const failure = read
        ? createFailure('tool.failed', `Tool '${row.tool}' was stopped: ${why}`)
        : createFailure('tool.outcome_unknown', `The outcome of tool '${row.tool}' is unknown: ${why}`, {
            details: { tool_call_id: row.id },
          });
      if (!read) unknownCalls.push(row.id);
      // The result records no time (nothing came back); the event tells how long the call ran.
      const outcome = { status: read ? 'failed' : 'unknown', result: toErrorResult(failure) } as const;
      const ran = row.started_at === null ? 0 : Date.now() - row.started_at;
      const settled = toSettledCall(row, outcome, { duration_ms: ran, cause: 'aborted' });
      driver.stageToolCall(settled.row);
      driver.emit(settled.type, settled.data);
    }
  }

  function retire(failure: Failure | null): void {
    if (retired) return;
    retired = true;
    if (failure) actor.stop();
    deps.onRetired(driver, failure);
  }

  const driver: RunDriver = {
    runId,
    actor,
    memory,
    context,
    get status(): RunStatus {
      return lastStatus;
    },
    get retired(): boolean {
      return retired;
    },
    get epoch(): number {
      return fence.epoch;
    },
    reclaimed(epoch: number): void {
      fence.epoch = Math.max(fence.epoch, epoch);
    },
    get idle(): boolean {
      return !dirty && buffer.length === 0 && pendingFlush === null && !stopped;
    },
    /** Buffers a write for the next flush. */
    stage(op: (writer: UnitWriter) => void): void {
      buffer.push(op);
    },
    /** Buffers a ledger row; the run's memory shows it at once. */
    stageToolCall(row: ToolCallRow): void {
      memory.ledger.set(row.id, row);
      buffer.push((writer) => writer.putToolCall(row));
    },
    /** Buffers a new approval; the run's memory shows it at once. */
    stageApproval(row: ApprovalRow): void {
      memory.approvals.set(row.id, row);
      buffer.push((writer) => writer.insertApproval(row));
    },
    get writer(): UnitWriter {
      return currentWriter();
    },
    /** Writes a ledger row at once; only for use inside a staged op. */
    writeToolCall(row: ToolCallRow): void {
      currentWriter().putToolCall(row);
      memory.ledger.set(row.id, row);
    },
    /** Buffers an event; it is numbered when written (so seq follows commit order) and published once committed. */
    emit(type: RunEventName, data: Record<string, unknown>): void {
      buffer.push(() => writeEvent(type, data));
    },
    /** Writes an event at once; only for use inside a staged op. */
    writeEvent,
    /** Publishes streamed model text at once: live only, never a row, never an answer. */
    publishDraft(data: Record<string, unknown>): void {
      if (retired) return;
      // A model may stream its first tokens while the events before them (the last step's
      // result, the move to planning) are still being committed: the draft waits for them, so a
      // reader never sees a step's text ahead of what led to it.
      const createdAt = Date.now();
      if (pendingFlush !== null || buffer.length > 0 || dirty) {
        // Events staged and not written yet: the draft takes its place among them, and goes out
        // with them, numbered after the last event before it (never stored).
        buffer.push(() => written.push({ runId, seq, type: 'draft', data, createdAt }));
        return;
      }
      if (flushesBegun > flushesSettled || heldDrafts.length > 0) {
        // Events written and not committed yet: the draft follows them once they are out.
        heldDrafts.push({ after: flushesBegun, data, createdAt });
        return;
      }
      hub.publish([{ runId, seq, type: 'draft', data, createdAt }]);
    },
    /** Makes everything buffered so far durable; resolves after the COMMIT. */
    flush(): Promise<void> {
      if (retired) {
        return Promise.reject(new BatonError(createFailure('run.closed', `Run '${runId}' is no longer driven here`)));
      }
      if (!pendingFlush) {
        flushesBegun += 1;
        let settled = false;
        const settle = () => {
          if (!settled) flushesSettled += 1;
          settled = true;
        };
        pendingFlush = store.write(write, fence).then((committed) => {
          failpoint('commit.publishing');
          hub.publish(committed);
          settle();
          releaseDrafts();
          deps.onCommitted?.(committed.filter((event) => event.type !== 'draft'));
          if (TERMINAL.has(lastStatus) && !dirty && buffer.length === 0) retire(null);
          else if (lastStatus === 'waiting_human' && driver.idle && !retired) deps.onIdleWaiting?.(driver);
        });
        pendingFlush.catch((error: unknown) => {
          // The run is retired: its held drafts are dropped (they are live text, never kept).
          settle();
          heldDrafts = [];
          retire(toFailure(error, 'store.checkpoint_failed'));
        });
      }
      return pendingFlush;
    },
    start(): void {
      actor.subscribe({
        next(snapshot) {
          const status = statusOf(snapshot.value);
          if (status !== lastStatus) {
            const ctx = snapshot.context;
            if (TERMINAL.has(status)) settleOpenCalls(ctx.stopReason);
            driver.emit('state', {
              from: lastStatus,
              to: status,
              step_index: ctx.stepIndex,
              ...(ctx.stopReason ? { stop_reason: ctx.stopReason } : {}),
              ...(ctx.failure ? { failure: withUnknown(ctx.failure) } : {}),
              ...(ctx.waitReason ? { wait_reason: ctx.waitReason, approval_id: ctx.pendingApprovalId } : {}),
              ...(unknownCalls.length > 0 ? { unknown_tool_calls: unknownCalls } : {}),
              ...(TERMINAL.has(status) && ctx.compensation
                ? { compensation: toCompensationData(toRunCompensation(ctx.compensation, true)) }
                : {}),
            });
            if (status === 'succeeded') deps.onSucceeded(driver);
            lastStatus = status;
          }
          dirty = true;
          driver.flush().catch(() => undefined);
        },
        error(error) {
          retire(toFailure(error));
        },
      });
      actor.start();
    },
    /** Settles the calls a compensation found still running (the cancel aborted them) as a run's end would. */
    settleInterrupted(stopReason: string): void {
      settleOpenCalls(stopReason, (row) => row.call_index >= 0);
    },
    /** Stops the actor without writing anything (close or crash simulation). */
    stop(): void {
      retired = true;
      stopped = true;
      actor.stop();
    },
  };
  return driver;
}
