/** Every behaviour-changing default of Baton, in one place. */
export const DEFAULTS = {
  /** Planner decisions per run before it fails with `max_steps`. */
  maxSteps: 25,
  /** Identical failing tool calls in a row before `loop_detected`. */
  loopThreshold: 3,
  /** Per-tool wall clock unless the tool says otherwise. */
  toolTimeoutMs: 30_000,
  /** Per-tool output size before it becomes an artifact with a preview. */
  maxOutputBytes: 16_384,
  /** Size of the preview kept in context when an output becomes an artifact. */
  previewBytes: 1_024,
  /** Token budget of the context given to the planner at each step. */
  contextTokens: 32_000,
  /**
   * Attempts of an `idempotent` or `reconcilable` call whose outcome stays unknown (a timeout, a
   * crash mid-call) before a human decides; an `unsafe` one goes to a human after its first.
   */
  maxToolAttempts: 3,
  /**
   * Attempts of a call that saved a handle of its work (`ToolContext.saveHandle`, an MCP task):
   * each interrupted one follows the same work again, until this many, then a human decides.
   */
  maxHandleAttempts: 10,
  /**
   * A run waiting on its call's work elsewhere (an MCP task) polls it after the interval the tool
   * asks for, within these bounds (ms), or after `taskPollMs` when it names none; while the work
   * cannot be reached, after `taskPollMs` doubling up to `taskPollMaxMs`. One poll takes at most
   * `taskPollTimeoutMs` (then it counts as unreachable).
   */
  taskPollMs: 1_000,
  taskPollMinMs: 200,
  taskPollMaxMs: 60_000,
  taskPollTimeoutMs: 30_000,
  /**
   * How deep agents called as tools nest: a run this many child runs below its root calls no
   * agent tool (the call fails, and the model is told), so an agent that calls itself stops.
   */
  maxChildDepth: 8,
  /** Handoffs open at once in one run (`handoff`): a deeper one fails, and the model is told to hand back first. */
  maxHandoffDepth: 8,
  /**
   * Steps any walk of a tree of runs takes at most (up to a parent, down to the run that asks, a
   * prune's children): one more than a tree can be deep, so a damaged or looping tree ends a walk.
   */
  treeWalkSteps: 9,
  /** Retries of a tool that reports itself unavailable (transient). */
  toolUnavailableRetries: 2,
  /** First backoff for those retries; doubles each time. */
  toolRetryBackoffMs: 50,
  /** SQLite busy timeout for a file shared by several processes. */
  busyTimeoutMs: 5_000,
  /** How long a runtime's claim on a run lasts without a heartbeat. */
  leaseMs: 30_000,
  /** First wait before a run whose commit the database refused (a full disk) is tried again; doubles each time… */
  writeRetryMs: 100,
  /** …up to this. */
  writeRetryMaxMs: 5_000,
  /** How long a refused write keeps `health()` degraded when no commit has landed since. */
  writeFailureHealthMs: 60_000,
  /** Longest id a failure message quotes whole (ids from a URL path can be any length); longer ones are cut with `…`. */
  messageIdChars: 80,
} as const;

/** Per-run limits; `undefined` means unlimited (except `maxSteps`). */
export interface RunLimits {
  maxSteps: number;
  maxLlmCalls?: number | undefined;
  maxToolCalls?: number | undefined;
  maxTokens?: number | undefined;
  timeoutMs?: number | undefined;
}

/** Defaults of the OpenAI-compatible planner. */
export const OPENAI_PLANNER_DEFAULTS = {
  /** Completion limit sent with each request; also the output side of `estimate()`. */
  maxCompletionTokens: 4_096,
  /** Idle limit of one request: until the response starts, and between two stream chunks. */
  timeoutMs: 60_000,
  /** Retries of transient failures (429, 5xx, connection errors, timeouts, broken streams) per step. */
  maxRetries: 3,
  /** First backoff; doubles on each retry. */
  baseDelayMs: 500,
  /** Cap on any wait between retries, `Retry-After` included. */
  maxDelayMs: 30_000,
  /** Whether the model is given the images tool calls return: off, since text-only models refuse image parts. */
  images: false,
  /** API key sent to an OpenAI-compatible server that was configured without one (local servers need none). */
  placeholderApiKey: 'baton-no-key',
} as const;

/** Defaults of the HTTP server. */
export const SERVER_DEFAULTS = {
  /** Largest request body accepted; larger answers 413. */
  bodyBytes: 64 * 1024,
  /** Token bucket per token: requests in a burst, and tokens refilled per second. */
  rateBurst: 120,
  ratePerSecond: 20,
  /** Open SSE connections per tenant; more answer 429. */
  sseConnectionsPerTenant: 100,
  /**
   * How often the stream of every run (`GET /v1/events`) reads the feed when nothing woke it:
   * events committed by another process on a SQLite file, or a PostgreSQL notification missed.
   */
  feedPollMs: 1_000,
  /** Interval of the `: ping` comment on idle SSE streams, so proxies keep them open. */
  heartbeatMs: 15_000,
  /** How long an SSE ticket (`POST /v1/tickets`) opens new streams; it travels in URLs, so briefly. */
  ticketTtlMs: 60_000,
  /**
   * How long after its token was traded a ticket still reopens a stream it was used on (an
   * EventSource reconnecting with `Last-Event-ID`, after a restart, say) and can be renewed.
   */
  ticketRenewMs: 24 * 60 * 60_000,
  /** Longest `POST /v1/runs?wait=true` holds the request; then it answers with the run as it is. */
  waitTimeoutMs: 120_000,
  /** How long `close()` lets open requests finish before it drops their connections. */
  closeGraceMs: 2_000,
} as const;
