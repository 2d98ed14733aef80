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
  /** Retries of a tool that reports itself unavailable (transient). */
  toolUnavailableRetries: 2,
  /** First backoff for those retries; doubles each time. */
  toolRetryBackoffMs: 50,
  /** SQLite busy timeout for a file shared by several processes. */
  busyTimeoutMs: 5_000,
  /** How long a runtime's claim on a run lasts without a heartbeat. */
  leaseMs: 30_000,
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
  /** API key sent to an OpenAI-compatible server that was configured without one (local servers need none). */
  placeholderApiKey: 'baton-no-key',
} as const;
