/** Ids and hashes. Ledger ids derive only from persisted data, so a replay finds its own rows. */
import { createHash, randomBytes } from 'node:crypto';

let counter = 0;

/** A new random id with a prefix that sorts by creation time (and by creation order within this process). */
export function newId(prefix: string): string {
  const time = Date.now().toString(36).padStart(9, '0');
  counter = (counter + 1) % 36 ** 4;
  return `${prefix}_${time}${counter.toString(36).padStart(4, '0')}${randomBytes(6).toString('hex')}`;
}

/** The ledger id of call `callIndex` of step `stepIndex`; also its idempotency key. */
export function toolCallId(runId: string, stepIndex: number, callIndex: number): string {
  return `${runId}.s${stepIndex}.c${callIndex}`;
}

/** The approval of the calls of one step that need a human. */
export function stepApprovalId(runId: string, stepIndex: number): string {
  return `${runId}.s${stepIndex}.approval`;
}

/** The wait for the answer to the question call `callId` asked (`human.ask`). */
export function inputWaitId(callId: string): string {
  return `${callId}.input`;
}

/** The approval asking a human about an interrupted `unsafe` call, per attempt (single use). */
export function uncertainApprovalId(callId: string, attempt: number): string {
  return `${callId}.uncertain${attempt}`;
}

/** The id of the approval to run call `callId` with tool version `version` (decided with another). */
export function versionApprovalId(callId: string, version: string): string {
  return `${callId}.version.${version}`;
}

/** The wait on a fork's call that would repeat an effect its source run had (single use). */
export function repeatApprovalId(callId: string): string {
  return `${callId}.repeat`;
}

/** The id of the child run a call of an agent tool starts: the call's, so a call never starts two. */
export function childRunId(callId: string): string {
  return `${callId}.child`;
}

/** The wait of a parent run on the child run its call `callId` started. */
export function childWaitId(callId: string): string {
  return `${callId}.await`;
}

/** The id of the wait of call `callId`'s attempt `attempt` on the work it left running elsewhere (an MCP task). */
export function taskWaitId(callId: string, attempt: number): string {
  return `${callId}.task${attempt}`;
}

/** The ledger id of the compensation of a call (its idempotency key too): the call's id and this suffix. */
export const COMPENSATION_SUFFIX = '.undo';

/** The ledger id of the compensation that undoes call `callId`. */
export function compensationId(callId: string): string {
  return `${callId}${COMPENSATION_SUFFIX}`;
}

/** JSON with sorted keys, so equal values hash equally. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** sha256 of a value's stable JSON. */
export function hashOf(value: unknown): string {
  return createHash('sha256')
    .update(stableJson(value) ?? 'undefined')
    .digest('hex');
}
