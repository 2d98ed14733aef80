/** What one call of a step runs with, and why an outcome may be unknown: shared by the executor's parts. */
import type { ToolCallStatus } from '../../store/index.js';
import type { ToolResult } from '../../tools/tool-result.js';
import type { UnknownCause } from '../../tools/run-tool.js';
import type { LiveRun, RuntimeEnv } from '../drive/env.js';
import type { PreparedCall } from '../ledger/prepared-call.js';

/** Why an outcome is unknown: a cause from running it here, or `interrupted` (found `started` on resume). */
export type UnknownOutcome = UnknownCause | 'interrupted';

/** What a call runs with. */
export interface CallScope {
  env: RuntimeEnv;
  live: LiveRun;
  runId: string;
  stepIndex: number;
  signal: AbortSignal;
  /** Settles the call in the ledger (row and `result` event). */
  settle(call: PreparedCall, status: ToolCallStatus, result: ToolResult, extra?: Record<string, unknown>): void;
}
