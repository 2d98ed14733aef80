/** `Runtime`: what `createRuntime` takes and gives an embedder, member by member. */
import type { InspectionEvent } from 'xstate';
import type { RunMachineDefinition } from '../../machines/variants.js';
import type { Planner } from '../planner/types.js';
import type { Policy } from '../policy/index.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { RuntimeHooks } from './drive/env.js';
import type { PlannerLimits } from './drive/limiter.js';
import type { ScheduleCommands } from './registry/schedules.js';
import type { Failure } from '../failure.js';
import type { FollowOptions } from './read/follow.js';
import type { Trace } from './observe/trace.js';
import type { ToolInfo } from './ledger/tool-registry.js';
import type { PruneOptions, PruneReport, RetentionOptions } from './retention/prune.js';
import type { TracingOptions } from './observe/otel.js';
import type { BackgroundErrorContext, StalledRun } from './registry/run-registry.js';
import type { AgentDefinition } from './registry/agents.js';

export type { BackgroundErrorContext, StalledRun } from './registry/run-registry.js';
import type {
  ForkRequest,
  RerunFilter,
  RerunReport,
  Approval,
  Artifact,
  ArtifactRef,
  Checkpoint,
  FeedEvent,
  Run,
  RunDefaults,
  RunEventRecord,
  StartRequest,
  Step,
  ToolCall,
  ApproveInput,
  HumanDecision,
  RejectInput,
  MemoryRequest,
  MemorySnapshot,
  RunListFilter,
} from './model/types.js';

/** `createRuntime({ limits })`. */
export interface RuntimeLimits {
  /** Limits on planner calls, per key (`key` from the run's id, context and agent; absent: one key). */
  planner?: PlannerLimits;
  /**
   * The most runs of one tenant (`context.tenant_id`) in flight at once: started and not ended
   * (queued runs do not count). A start over it is refused, `run.tenant_limit` (HTTP 429), and
   * leaves nothing behind; enforced by the database, whoever starts.
   */
  runsPerTenant?: number;
}

/** How a runtime is created. */
export interface RuntimeOptions {
  /**
   * Where runs are kept: the path of a SQLite file (created if missing), or a PostgreSQL URL
   * (`postgres://user@host:5432/db`), which any number of runtimes in any number of processes
   * may share.
   */
  database: string;
  planner: Planner;
  tools: AnyTool[];
  policy?: Policy;
  /** Defaults for every run of this runtime; a run's own options win. */
  defaults?: RunDefaults;
  /** XState's inspection tap, for inspectors and tracing. */
  inspect?: (event: InspectionEvent) => void;
  /**
   * Resume every run in flight on open, and go on claiming runs no live runtime holds (default
   * true): what a worker does. `false` drives only the runs this runtime starts or acts on.
   */
  recover?: boolean;
  /**
   * Go on claiming runs that no live runtime holds, a worker's job (default: as `recover`).
   * `baton serve` opens with `recover: false` and `claim: true`, and recovers explicitly.
   */
  claim?: boolean;
  /**
   * Drive runs at all (default true). `false` makes an API-only runtime (`baton serve
   * --no-worker`): it records runs and decisions and leaves driving them to the workers that
   * share its database.
   */
  drive?: boolean;
  /** How long a claim on a run lasts without renewal (default 30 s); renewed every third of it. */
  leaseMs?: number;
  /** How often a worker looks for runs to claim besides notifications (default 1 s on PostgreSQL, a third of the lease on SQLite). */
  claimEveryMs?: number;
  /** Most runs this runtime drives at once; a worker claims no more (default 1,000). */
  maxRuns?: number;
  /**
   * Limits shared by every runtime on the database (docs/architecture.md §4.13): on planner calls
   * (the model API's own limits, per key), and the most runs of one tenant in flight at once.
   * Tools declare their own (`defineTool({ concurrency, rate })`).
   */
  limits?: RuntimeLimits;
  /** Token budget of the context given to the planner at each step (default 32,000). */
  contextTokens?: number;
  /** For test harnesses: a place to hold each actor before it produces its event. */
  hooks?: RuntimeHooks;
  /**
   * The run machine: Baton's own by default, or a variant (`extendRunMachine`,
   * `defineRunMachine`) that keeps the six public states and the events the runtime sends.
   * Checked before the file is opened; runs made by another machine are never driven.
   */
  machine?: RunMachineDefinition;
  /**
   * Prune finished runs on a schedule (see `prune()`): those that finished more than `maxAgeMs`
   * ago, every `everyMs` (default one hour).
   */
  retention?: RetentionOptions;
  /**
   * OpenTelemetry spans of the runs this runtime drives (default on: no-ops until the
   * application registers a tracer provider; see `batonIdGenerator`). `false` turns the hook off;
   * `{ content: true }` records tool arguments and results on spans, capped.
   */
  tracing?: boolean | TracingOptions;
  /**
   * The agent whose runs this runtime drives (default `default`): recorded on every run it starts,
   * with a fingerprint of its tools. A runtime drives, claims and wakes only runs of its agent
   * (and runs from before agents were recorded), so processes of different agents can share a
   * database; another agent's run is refused with `run.agent_mismatch`. `baton serve` and
   * `baton worker` use the agent module's name.
   */
  agent?: string;
  /**
   * Other agents whose runs this runtime drives besides its own (`defineAgent`s): those its agent
   * tools (`agentTool`) hand work to are found by themselves, through their tools too; name
   * others here. Each plans with its own planner (or its offline planner).
   */
  agents?: AgentDefinition[];
  /**
   * Told of every failure the runtime handles in the background, where no caller waits for it:
   * a run given up after failed commits, a waiting run that could not be woken, a lease renewal
   * or notification that failed, a scheduled prune that failed. `baton serve` and `baton worker`
   * log them. Without it they are dropped (the runs concerned show in `health()` and
   * `recoveryFailures`).
   */
  onError?: (failure: Failure, where: BackgroundErrorContext) => void;
}

/** Whether a runtime can do its work now, as `health()` reports it. */
export interface RuntimeHealth {
  /** `degraded` while some run cannot commit (e.g. a full disk; listed in `stalledRuns`, and retried) or the database refuses writes (`writeFailure`). */
  status: 'ok' | 'degraded';
  /** Runs whose commits failed and that are tried again, with backoff, until one lands. */
  stalledRuns: StalledRun[];
  /** The last write the database refused (in the last minute), when no commit has landed since; null otherwise. */
  writeFailure: { failure: Failure; since: number } | null;
}

/** What `stats()` counts. */
export interface RuntimeStats {
  /** Group-commit transactions (each one fsync) since the runtime opened. */
  commits: number;
  /** Runs this runtime drives right now (each holds an actor in memory); a run waiting for a human is not one. */
  liveRuns: number;
  /** Timers held for runs waiting in the file: one scheduler's, at most, whatever their number. */
  wakeTimers: number;
  /** Claim rounds a worker has run (each one claim statement); 0 for a runtime that does not claim. */
  claimRounds: number;
}

/**
 * A Baton runtime: starts, drives and reads runs. Its schedules (`schedule`, `listSchedules`, …) start
 * runs at their ticks, ticked by the runtimes that claim runs (docs/architecture.md §3).
 */
export interface Runtime extends ScheduleCommands {
  /** Creates a run, commits it, and starts it; resolves once the run is durable. The same idempotency key returns the same run. */
  start(request: StartRequest): Promise<Run>;
  /**
   * Forks a run at step `atStep`: a new run (in a session of its own) whose earlier steps are the
   * source's — decisions, results, waits and events copied, never run or asked again — and which
   * plans `atStep` on with this runtime's agent, optionally with a given decision, input (step 0)
   * or options. The source is not changed. A call that would repeat an effect the source had
   * waits for a person (`repeat_effect`) unless `repeatEffects: 'allow'`. Resolves once the fork
   * is durable. Throws `input.invalid` (a step the run has not reached, a decision that does not
   * validate), `run.not_found`, `fork.tool_missing` (a copied call of a tool this agent lacks).
   */
  fork(runId: string, request: ForkRequest): Promise<Run>;
  /** The forks of a run, newest first (at most `limit`, default 100). */
  forks(runId: string, opts?: { limit?: number }): Promise<Run[]>;
  /**
   * Forks every finished run the filter matches (default: `failed`) at the step it ended in, in
   * batches; the same rerun again creates nothing (each fork's key is its source and step).
   */
  rerun(filter?: RerunFilter): Promise<RerunReport>;
  /** The durable state of a run (a quarantined one carries its `store.corrupt_row` failure); throws `run.not_found`. */
  get(runId: string): Promise<Run>;
  /**
   * Runs, newest first, filtered by status, session, tenant, metadata entries, tags, failure code
   * and creation time (all at once; see `RunListFilter`); page with `cursor` (the previous page's
   * `nextCursor`). A bad filter is `input.invalid`.
   */
  list(filter?: RunListFilter): Promise<{ runs: Run[]; nextCursor: string | null }>;
  /**
   * The one way to follow a run: its committed events after `after`, in order and each once,
   * then live ones until the run ends (unless `follow: false`), drafts included; `signal` stops
   * it. A slow reader costs bounded memory (it reads on from the log); a run driven by another
   * process is read from the file. Throws `run.not_found` on the first `next()`.
   */
  events(runId: string, opts?: FollowOptions): AsyncGenerator<RunEventRecord>;
  /** Resolves when the run is terminal or waiting for a human (durably); a quarantined run rejects. */
  wait(runId: string): Promise<Run>;
  /** The planner steps of a run: each decision, its usage and its context report. */
  steps(runId: string): Promise<Step[]>;
  /** The tool-call ledger of a run, in step and call order; then its compensations' rows, in the order they were made (newest call first). */
  toolCalls(runId: string): Promise<ToolCall[]>;
  /** The trace of a run: steps and timed spans built from its committed events. */
  trace(runId: string): Promise<Trace>;
  /** Listens to the committed events of every run (and live drafts); returns the unsubscribe function. */
  watch(listener: (event: RunEventRecord) => void): () => void;
  /** The approvals of a run, oldest first. */
  approvals(runId: string): Promise<Approval[]>;
  /** What a run stored as artifacts (large tool outputs), in the order it stored them. Throws `run.not_found`. */
  artifacts(runId: string): Promise<ArtifactRef[]>;
  /** The bytes of an artifact the run stored; `artifact.not_found` for one it did not (even if another run did). */
  artifact(runId: string, sha256: string): Promise<Artifact>;
  /** Approves a pending approval: exactly its calls run; for an uncertain call, `resolution` says retry or record as done. */
  approve(runId: string, approvalId: string, decision: ApproveInput): Promise<Approval>;
  /** Rejects a pending approval: the model is told, or with `terminate` the run ends `rejected` (after undoing its calls, with `compensate`). */
  reject(runId: string, approvalId: string, decision: RejectInput): Promise<Approval>;
  /**
   * Decides any human wait of a run: `approve`, `reject`, `edit` (approve with a person's
   * arguments, checked by the tool's schema), `respond` (a person's output instead of the call),
   * `answer` (a question), `extend` / `end` (a budget wait). Checked against the wait first: bad
   * input is `input.invalid` and changes nothing; a decided wait `approval.already_decided`, an
   * expired one `approval.expired`, one that does not take it `approval.wrong_decision`.
   */
  decide(runId: string, approvalId: string, decision: HumanDecision): Promise<Approval>;
  /** Answers the question a run waits on (`pendingInput.id`), checked against its schema. */
  answer(runId: string, inputId: string, answer: { answer: unknown; by: string; reason?: string }): Promise<Approval>;
  /**
   * Cancels a run: it ends `failed` with `cancelled`; a running tool is aborted and its call
   * settled. With `compensate`, the run first undoes its completed calls that have a compensator,
   * newest first (it stays `executing` meanwhile; `wait()` for the end and its `compensation`).
   */
  cancel(runId: string, opts?: { reason?: string; compensate?: boolean }): Promise<Run>;
  /**
   * Pauses a run before its next step: a call in flight finishes and is recorded first, then the
   * run waits (`waiting_human`, reason `paused`), holding no memory and surviving restarts, until
   * `resume` (or a cancel). Until it is reached the run shows `pauseRequested`; asking again then
   * changes nothing. Refused with `run.invalid_transition` for a run that is paused already,
   * queued, finished, or undoing its calls. Whoever drives the run carries it out (another
   * process too: at once on PostgreSQL, at its next lease renewal on SQLite).
   */
  pause(runId: string, opts?: { reason?: string; by?: string }): Promise<Run>;
  /**
   * Lets a paused run go on where it stopped (a decision `resume` on its pause, by `by`,
   * default `operator`). `run.invalid_transition` for a run that is not paused.
   */
  resume(runId: string, opts?: { reason?: string; by?: string }): Promise<Run>;
  /** Delivers a machine event to a run, as one of its actors would (tools, tests); refused with `run.invalid_transition` if its state does not take it. */
  send(runId: string, event: unknown): Promise<Run>;
  /**
   * Resumes the runs in flight (pending, planning, executing) that no live runtime drives, 50
   * now and 50 a turn after that, and returns the ids resumed or queued. Runs waiting for a
   * human stay in the file: a decision, a cancel or their deadline loads them; their rows are
   * checked in the background (damaged ones are reported).
   */
  recover(): Promise<string[]>;
  /** Runs that `recover()` found but could not resume (quarantined rows among them), with why. */
  readonly recoveryFailures: ReadonlyMap<string, Failure>;
  /**
   * A page of a run's committed events after `after` (default 0), oldest first, at most `limit`
   * (default 1,000): one read of what `events()` replays. Throws `run.not_found`.
   */
  readEvents(runId: string, opts?: { after?: number; limit?: number }): Promise<RunEventRecord[]>;
  /**
   * A page of the feed: the `run.created` and `state` events of every run (of `tenantId`'s runs,
   * when given) after position `after` (default 0), at most `limit` (default 1,000). Positions
   * grow in commit order across runs and processes, so a reader that resumes after the last one
   * it saw misses nothing and sees nothing twice. What `GET /v1/events` sends, with `id:` the position.
   */
  readFeed(opts?: { after?: number; limit?: number; tenantId?: string }): Promise<FeedEvent[]>;
  /** The feed's highest position so far (0 when empty): a reader starting now resumes after it. */
  feedHead(): Promise<number>;
  /**
   * A random secret (43 base64url characters) kept in the database under `name`: created by the
   * first runtime that asks and the same for every runtime on that database afterwards (the
   * key of `baton serve`'s SSE tickets).
   */
  sharedSecret(name: string): Promise<string>;
  /** Where a run's persisted snapshot stands: how often it was written, its size, its machine. Throws `run.not_found`. */
  checkpoint(runId: string): Promise<Checkpoint>;
  /**
   * Deletes finished runs (succeeded or failed) that finished before `finishedBefore`, with their
   * events, steps, ledger rows, approvals, session history, the artifacts no remaining run
   * stored and sessions left empty. Never an active or waiting run, nor a finished run whose
   * session has an active one. Runs in bounded batches (`batchSize`, one transaction each) with
   * a turn of the event loop between them; `dryRun` counts and changes nothing.
   */
  prune(options: PruneOptions): Promise<PruneReport>;
  /** The tools runs can call: what each runs as (effect, risk, trust) and, for an MCP tool, its server and annotations. */
  tools(): ToolInfo[];
  /**
   * The versioned memory (`memoryTools()`) of a session and its tenant as of a version (default:
   * the last), as a run's step reads it: `{ version, session, tenant }`.
   */
  memory(request?: MemoryRequest): Promise<MemorySnapshot>;
  /** Counters of this runtime since it opened (for benchmarks and monitoring). */
  stats(): RuntimeStats;
  /** Whether the runtime can do its work now: `degraded`, with the runs concerned, while commits fail (a full disk). */
  health(): RuntimeHealth;
  /**
   * Resolves once the database is open and, unless `recover: false`, the first batch of runs in
   * flight is resumed (`recover()`'s first 50); rejects if the database cannot be opened.
   * Every member waits for it by itself; await it to know the runtime is up.
   */
  readonly ready: Promise<void>;
  /** The agent whose runs this runtime drives, and its tools' fingerprint. */
  readonly agent: { name: string; toolsFingerprint: string };
  /** This runtime's id as its leases name it (`host:pid:random`). */
  readonly owner: string;
  /** The machine this runtime drives its runs with: Baton's (`baton.run`) or the variant it was given. */
  readonly machine: RunMachineDefinition;
  /** Stops every run (in-flight tools are aborted) and closes the file; runs resume on the next open. */
  close(): Promise<void>;
}
