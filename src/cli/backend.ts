/** What a command needs from where the runs are: a runtime in this process, or a server over HTTP. */
import type { RunStatus } from '../index.js';
import type { ApprovalJson, EventJson, RunJson, RunPage, ToolJson } from './api-json.js';

/** A new run, as the body of `POST /v1/runs`. */
export interface StartBody {
  input: string;
  session_id?: string;
  context?: Record<string, unknown>;
}

/** A decision on an approval, as the body of `POST /v1/runs/{id}/approvals/{approval_id}`. */
export interface DecisionBody {
  decision: 'approve' | 'reject';
  reason?: string;
  /** With `reject`: end the run `failed` (`rejected`) instead of telling the model. */
  terminate?: boolean;
  /** With `terminate`: undo the run's completed calls before it ends. */
  compensate?: boolean;
  /** With `approve` of an interrupted unsafe call: run it again, or record it as done. */
  resolution?: 'retry' | 'done';
}

/** The runs of a database file or of a server, behind one interface. */
export interface Backend {
  /** `http://…` or the database file, for messages. */
  readonly where: string;
  /** True when this process drives the runs (they stop when it exits, and resume on the next open). */
  readonly inProcess: boolean;
  start(body: StartBody): Promise<RunJson>;
  get(runId: string): Promise<RunJson>;
  list(filter: { status?: RunStatus | undefined; limit?: number | undefined }): Promise<RunPage>;
  steps(runId: string): Promise<unknown[]>;
  /** The tools runs can call, as `GET /v1/tools` lists them (in process: the agent's). */
  tools(): Promise<ToolJson[]>;
  toolCalls(runId: string): Promise<unknown[]>;
  /**
   * The committed events after `after`; with `follow`, then live ones (and drafts) until the run
   * ends. Ends early, without an error, when `signal` aborts.
   */
  events(runId: string, options: { after?: number; follow: boolean; signal?: AbortSignal }): AsyncIterable<EventJson>;
  decide(runId: string, approvalId: string, body: DecisionBody): Promise<ApprovalJson>;
  /** The bytes of an artifact the run stored, with their media type. */
  artifact(runId: string, sha256: string): Promise<{ mediaType: string; content: Buffer }>;
  /** The whole run as one JSON document (`GET /v1/runs/{id}/export`). */
  exportRun(runId: string): Promise<Record<string, unknown>>;
  /** Cancels a run; with `compensate`, it undoes its completed calls first (the run is answered as it is then). */
  cancel(runId: string, opts: { reason?: string | undefined; compensate?: boolean }): Promise<RunJson>;
  /**
   * In process: resolves when the run is terminal or waiting for a human (this process drives
   * it there). Over HTTP the server drives it: the run as it is now.
   */
  settle(runId: string): Promise<RunJson>;
  close(): Promise<void>;
}
