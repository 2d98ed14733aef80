/**
 * A run driver owns one live run: its XState actor, its event numbering and its write buffer.
 * Every transition marks the run dirty and schedules a flush; a flush writes the buffered
 * ledger rows, the events and the latest snapshot in one compare-and-set unit of the shared
 * transaction. Actors flush before any side effect, so what they act on is already durable.
 * The driver wires its parts, one job each: the write buffer (`unit-buffer.ts`), the snapshot
 * (`snapshot-saver.ts`), the flushes (`run-flush.ts`), drafts (`draft-relay.ts`), transitions
 * (`run-transitions.ts`) and the calls a run's end cuts off (`cut-off-calls.ts`).
 */
import { createActor, type Actor, type InspectionEvent, type Snapshot } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import type { RunContext, RunInput, RunStatus } from '../../../machines/types.js';
import { BatonError, createFailure, type Failure } from '../../failure.js';
import type { ApprovalRow, Store, ToolCallRow, UnitWriter } from '../../store/index.js';
import type { EventHub } from '../model/event-hub.js';
import type { LogEventType, RunEventRecord } from '../model/types.js';
import { createCutOffCalls } from './cut-off-calls.js';
import { createDraftRelay } from './draft-relay.js';
import { createRunFlush } from './run-flush.js';
import { createRunMemory, type RunMemory } from './run-memory.js';
import { createRunTransitions } from './run-transitions.js';
import { createSnapshotSaver, TERMINAL } from './snapshot-saver.js';
import { createUnitBuffer } from './unit-buffer.js';

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
  /** Called in the transition to a terminal status, to stage what goes with the run's end. */
  onEnded?(driver: RunDriver): void;
  /** Called once the run's terminal snapshot is durable, or when the driver breaks. */
  onRetired(driver: RunDriver, failure: Failure | null): void;
  /** Called when the run is durably waiting for a human with nothing left to write. */
  onIdleWaiting?(driver: RunDriver): void;
  /** Called in the transition into a wait of the whole run (a budget's, a pause) whose row does not exist yet: stage it. */
  onRunWait?(driver: RunDriver): void;
  /** Told of the events this driver committed, once durable (the runtime's tracing). */
  onCommitted?(events: readonly RunEventRecord[]): void;
}

/** Where a driver starts from: a new run's input, or a persisted snapshot. */
export type DriverOrigin =
  /** `memory`: what a fork's new run starts with, copied from its source (empty otherwise). */
  | { kind: 'new'; input: RunInput; memory?: RunMemory }
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
  emit(type: LogEventType, data: Record<string, unknown>): void;
  /** Writes an event at once; only inside a staged op (`createdAt`: a copied event keeps its own time). */
  writeEvent(type: LogEventType, data: Record<string, unknown>, createdAt?: number): void;
  /** Publishes streamed model text at once: live only, never a row, never an answer. */
  publishDraft(data: Record<string, unknown>): void;
  /** Tells this runtime's `wait()`ers that a call asks a person in flight (committed already). */
  announceQuestion(): void;
  /** Makes everything buffered so far durable (ops, events, the latest snapshot); resolves after the COMMIT. */
  flush(): Promise<void>;
  /** Subscribes to the actor and starts it. */
  start(): void;
  /** Settles calls still `started` (not compensations) as a run's end would: for a compensation that begins. */
  settleInterrupted(stopReason: string): void;
  /** Stops the actor without writing anything more (close, or a crash simulation). */
  stop(): void;
}

/** Creates the driver of one run; call `start()` to run it. */
export function createDriver(deps: DriverDeps, runId: string, origin: DriverOrigin): RunDriver {
  const { hub } = deps;
  const actor = createRunActor(deps, origin);
  const restored = origin.kind === 'restore' ? origin : null;
  const memory = origin.memory ?? createRunMemory();
  const units = createUnitBuffer(runId, restored?.lastSeq ?? 0);
  const fence = { runId, owner: deps.owner, epoch: restored?.epoch ?? 0 };
  let retired = false;
  let stopped = false;

  function stageToolCall(row: ToolCallRow): void {
    memory.ledger.set(row.id, row);
    units.stage((writer) => writer.putToolCall(row));
  }

  function emit(type: LogEventType, data: Record<string, unknown>): void {
    units.stage(() => units.writeEvent(type, data));
  }

  function retire(failure: Failure | null): void {
    if (retired) return;
    retired = true;
    if (failure) actor.stop();
    deps.onRetired(driver, failure);
  }

  const cutOff = createCutOffCalls({
    memory,
    stage(settled) {
      stageToolCall(settled.row);
      emit(settled.type, settled.data);
    },
  });
  const snapshots = createSnapshotSaver(
    { runId, actor, machineVersion: deps.machineVersion, withUnknown: cutOff.withUnknown, approvals: memory.approvals },
    { version: restored?.version ?? 0, json: restored?.snapshot ?? '' },
  );
  const drafts = createDraftRelay({
    runId,
    hub,
    units,
    unwritten: () => flushes.waiting || units.staged > 0 || snapshots.dirty,
    retired: () => retired,
  });
  const flushes = createRunFlush({
    runId,
    store: deps.store,
    hub,
    fence,
    units,
    snapshots,
    drafts,
    stopped: () => stopped,
    committed(events) {
      deps.onCommitted?.(events.filter((event) => event.type !== 'draft'));
      const status = transitions.status;
      if (TERMINAL.has(status) && !snapshots.dirty && units.staged === 0) retire(null);
      else if (status === 'waiting_human' && driver.idle && !retired) deps.onIdleWaiting?.(driver);
    },
    failed: retire,
  });
  const transitions = createRunTransitions({
    actor,
    cutOff,
    snapshots,
    emit,
    succeeded: () => deps.onSucceeded(driver),
    ended: () => deps.onEnded?.(driver),
    runWait: (id) => {
      if (!memory.approvals.has(id)) deps.onRunWait?.(driver);
    },
    flush: () => driver.flush(),
    failed: retire,
  });

  const driver: RunDriver = {
    runId,
    actor,
    memory,
    context: () => actor.getSnapshot().context,
    get status(): RunStatus {
      return transitions.status;
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
      return !snapshots.dirty && units.staged === 0 && !flushes.waiting && !stopped;
    },
    stage: units.stage,
    stageToolCall,
    stageApproval(row: ApprovalRow): void {
      memory.approvals.set(row.id, row);
      units.stage((writer) => writer.insertApproval(row));
    },
    get writer(): UnitWriter {
      return units.writer();
    },
    writeToolCall(row: ToolCallRow): void {
      units.writer().putToolCall(row);
      memory.ledger.set(row.id, row);
    },
    emit,
    writeEvent: units.writeEvent,
    publishDraft: drafts.publish,
    announceQuestion: () => hub.publishQuestion(runId),
    flush(): Promise<void> {
      if (retired) {
        return Promise.reject(new BatonError(createFailure('run.closed', `Run '${runId}' is no longer driven here`)));
      }
      return flushes.flush();
    },
    start: () => transitions.start(),
    settleInterrupted(stopReason: string): void {
      cutOff.settle(stopReason, (row) => row.call_index >= 0);
    },
    stop(): void {
      retired = true;
      stopped = true;
      actor.stop();
    },
  };
  return driver;
}

/** The run's actor: a new one on the run's input, or one restored from its snapshot. */
function createRunActor(deps: DriverDeps, origin: DriverOrigin): Actor<RunMachine> {
  if (origin.kind === 'new') return createActor(deps.machine, { input: origin.input, inspect: deps.inspect });
  return createActor(deps.machine, {
    snapshot: JSON.parse(origin.snapshot) as Snapshot<unknown>,
    // A restored actor takes its context from the snapshot; input is not read.
    input: undefined as unknown as RunInput,
    inspect: deps.inspect,
  });
}
