/** What a command needs from where the runs are: a runtime in this process, or a server over HTTP. */
import type { ListedStatus } from '../index.js';
import type { ApprovalJson, EventJson, RerunReportJson, RunJson, RunPage, ToolJson } from './api-json.js';
import type { ForkBody, RerunBody } from '../server/routes/fork-body.js';

/** A new run, as the body of `POST /v1/runs`. */
export interface StartBody {
  input: string;
  session_id?: string;
  context?: Record<string, unknown>;
  /** `on_busy`: what a start in a session with an active run does (`POST /v1/runs`'s option). */
  options?: { on_busy?: 'reject' | 'enqueue' | 'interrupt' };
  /** What the run is found by (`--metadata`, `--tag`). */
  metadata?: Record<string, string>;
  tags?: string[];
}

/**
 * A decision on a wait, as the body of `POST /v1/runs/{id}/approvals/{approval_id}`: each
 * decision with its own fields (see the route); in process it is checked by the same schema.
 */
export interface DecisionBody {
  decision: 'approve' | 'reject' | 'edit' | 'respond' | 'answer' | 'extend' | 'end';
  reason?: string;
  /** With `reject`: end the run `failed` (`rejected`) instead of telling the model. */
  terminate?: boolean;
  /** With `terminate`: undo the run's completed calls before it ends. */
  compensate?: boolean;
  /** With `approve` of an interrupted unsafe call: run it again, or record it as done. */
  resolution?: 'retry' | 'done';
  /** With `edit`: the arguments the call runs with instead of the model's. */
  args?: unknown;
  /** With `respond`: the call's result, given instead of running it. */
  output?: unknown;
  /** With `edit` or `respond`: the call of the step it is about. */
  tool_call_id?: string;
  /** With `answer`: the answer to the run's question. */
  answer?: unknown;
  /** With `extend`: the run's new limits. */
  limits?: ExtendLimits;
}

/** The limits an `extend` sets (absolute; `timeout_ms` is more time from now). */
export interface ExtendLimits {
  max_steps?: number;
  max_llm_calls?: number;
  max_tool_calls?: number;
  max_tokens?: number;
  max_cost_usd?: number;
  timeout_ms?: number;
}

/** A new schedule, as the body of `POST /v1/schedules`. */
export interface ScheduleBody {
  id: string;
  cron?: string;
  timezone?: string;
  every?: number;
  at?: number | string;
  input: string;
  session_id?: string;
  overlap?: string;
  catch_up?: string;
  metadata?: Record<string, string>;
  tags?: string[];
}

/** What `baton schedules` asks of the schedules (`/v1/schedules`). */
export type ScheduleRequest =
  | { op: 'create'; body: ScheduleBody }
  | { op: 'list' }
  | { op: 'show' | 'pause' | 'resume' | 'trigger' | 'delete'; id: string };

/** The runs of a database file or of a server, behind one interface. */
export interface Backend {
  /** `http://…` or the database file, for messages. */
  readonly where: string;
  /** True when this process drives the runs (they stop when it exits, and resume on the next open). */
  readonly inProcess: boolean;
  start(body: StartBody): Promise<RunJson>;
  get(runId: string): Promise<RunJson>;
  list(filter: {
    status?: ListedStatus | undefined;
    limit?: number | undefined;
    forkedFrom?: string;
    parentRunId?: string;
    /** Runs with each of these metadata entries (values as text) and tags. */
    metadata?: Record<string, string>;
    tags?: string[];
    failureCode?: string;
    /** Runs created at or after this instant (ms). */
    createdAfter?: number;
  }): Promise<RunPage>;
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
  /** Answers the question a run waits on (`POST /v1/runs/{id}/inputs/{input_id}`). */
  answer(runId: string, inputId: string, body: { answer: unknown; reason?: string }): Promise<ApprovalJson>;
  /** The bytes of an artifact the run stored, with their media type. */
  artifact(runId: string, sha256: string): Promise<{ mediaType: string; content: Buffer }>;
  /** The whole run as one JSON document (`GET /v1/runs/{id}/export`). */
  exportRun(runId: string): Promise<Record<string, unknown>>;
  /**
   * Forks a run (`POST /v1/runs/{id}/fork`); in process this runtime drives the fork, and with
   * `ownAgent` (an `--agent` given) forks another agent's run for that agent.
   */
  fork(runId: string, body: ForkBody, opts?: { ownAgent?: boolean }): Promise<RunJson>;
  /** Forks the finished runs a filter matches at the step each ended in (`POST /v1/reruns`). */
  rerun(body: RerunBody): Promise<RerunReportJson>;
  /** Cancels a run; with `compensate`, it undoes its completed calls first (the run is answered as it is then). */
  cancel(runId: string, opts: { reason?: string | undefined; compensate?: boolean }): Promise<RunJson>;
  /**
   * A schedule command: a schedule (`create`, `show`, `pause`, `resume`), the schedules (`list`:
   * `{ schedules }`), the run a `trigger` started, or null (`delete`); as the API answers them.
   */
  schedules(request: ScheduleRequest): Promise<unknown>;
  /** Asks a run to pause before its next step (`POST /v1/runs/{id}/pause`): the run as it is then. */
  pause(runId: string, opts: { reason?: string | undefined }): Promise<RunJson>;
  /** Lets a paused run go on (`POST /v1/runs/{id}/resume`); in process this runtime drives it on. */
  resume(runId: string, opts: { reason?: string | undefined }): Promise<RunJson>;
  /**
   * In process: resolves when the run is terminal or waiting for a human (this process drives
   * it there). Over HTTP the server drives it: the run as it is now.
   */
  settle(runId: string): Promise<RunJson>;
  close(): Promise<void>;
}
