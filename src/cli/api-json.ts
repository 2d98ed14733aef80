/**
 * The JSON shapes the CLI works with: the HTTP API's (snake_case). In process, runtime records
 * are converted with the server's own functions, so `--json` prints the same with or without `--url`.
 */
import { isTerminalStatus } from '../../machines/run-status.js';
import type { toApprovalJson, toEventJson, toRerunReportJson, toRunJson, toScheduleJson } from '../server/index.js';

export {
  toApprovalJson,
  toEventJson,
  toRerunReportJson,
  toRunJson,
  toScheduleJson,
  toSnakeJson,
  toToolCallJson,
} from '../server/index.js';

/** A run, as `GET /v1/runs/{id}` answers it. */
export type RunJson = ReturnType<typeof toRunJson>;
/** A schedule, as `GET /v1/schedules/{id}` answers it. */
export type ScheduleJson = ReturnType<typeof toScheduleJson>;
/** An approval, as `POST /v1/runs/{id}/approvals/{approval_id}` answers it. */
export type ApprovalJson = ReturnType<typeof toApprovalJson>;
/** What a rerun did, as `POST /v1/reruns` answers it. */
export type RerunReportJson = ReturnType<typeof toRerunReportJson>;
/** An event, as an SSE frame's data. */
export type EventJson = ReturnType<typeof toEventJson>;

/** A tool, as `GET /v1/tools` lists it. */
export interface ToolJson {
  name: string;
  version: string;
  description: string;
  effect: string;
  risk: string;
  trusted_output: boolean;
  timeout_ms: number;
  max_output_bytes: number;
  parameters: Record<string, unknown>;
  origin: { kind: string; server: string; tool: string; annotations: unknown; overridden: string[] } | null;
}

/** A page of runs, as `GET /v1/runs` answers it. */
export interface RunPage {
  runs: RunJson[];
  next_cursor: string | null;
}

/** True for a run that will not change any more. */
export function isTerminalRun(run: Pick<RunJson, 'status'>): boolean {
  return isTerminalStatus(run.status);
}
