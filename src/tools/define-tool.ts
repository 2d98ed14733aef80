/** Declaring tools: a name, a version, a zod input, an effect class, a risk, and `execute`. */
import type { OnExpire } from '../../machines/types.js';
import type { z } from 'zod';
import { DEFAULTS } from '../defaults.js';
import { fail } from '../failure.js';

/** How much a call needs a human (declared with the machine's events, which carry it). */
export { EFFECTS, RISKS, type Effect, type Risk } from '../../machines/types.js';
import type { Effect, Risk } from '../../machines/types.js';

/** The caller's identity and scope, as given to `start({ context })`. */
export interface RunUserContext {
  user_id?: string | undefined;
  tenant_id?: string | undefined;
  scope?: string[] | undefined;
  [key: string]: unknown;
}

/** What a tool's `execute` and `reconcile` receive besides their input. */
export interface ToolContext {
  runId: string;
  toolCallId: string;
  /** Stable across retries of the same call: pass it to APIs that deduplicate. */
  idempotencyKey: string;
  /** Aborted on timeout, cancel and shutdown. */
  signal: AbortSignal;
  context: RunUserContext;
  /** 1 for the first attempt, 2 for the first retry, … */
  attempt: number;
  /** In a compensator: the id of the call it undoes (that call's idempotency key too). */
  compensates?: string;
  /**
   * Set when the call runs again after a person answered the question it asked by throwing
   * `ToolInputRequired`: the answer (checked against the question's schema), who gave it, and
   * the state the tool handed over with the question.
   */
  input?: ToolInput;
  /**
   * Asks a person while the call stays in flight, and resolves with their answer (the call's
   * timeout does not run meanwhile). The question lives only as long as this process: after a
   * restart the call's outcome is unknown and resolved by its effect class. A tool that can
   * stop and be called again with the answer throws `ToolInputRequired` instead, which survives
   * restarts. Absent where no person can be asked (in a compensator, in `reconcile()`).
   */
  ask?(question: ToolQuestion): Promise<ToolAnswer>;
  /**
   * The handle an earlier attempt of this call saved with `saveHandle` (a restart came between),
   * or null: follow that work to its end instead of starting it again.
   */
  handle?: unknown;
  /**
   * Saves the handle of work the call started elsewhere that outlives it (an MCP task, a remote
   * job's id) in the call's ledger row, durably, before it resolves: a call interrupted after it
   * runs again with `handle` set, whatever its effect class (at most `DEFAULTS.maxHandleAttempts`
   * times), instead of being an unknown outcome; `null` forgets it (the work is gone: an interrupted
   * call is then an unknown outcome, and a retry starts anew). Absent in a compensator and in
   * `reconcile()`.
   */
  saveHandle?(handle: unknown): Promise<void>;
  /** Reports how far the call has come: a committed `progress` event of the run. */
  progress?(update: ToolProgress): Promise<void>;
  /**
   * Lets go of the call while its work goes on elsewhere: throws `ToolDetached`, which the tool
   * lets through. Once the handle is saved (`saveHandle`), the run waits for that work holding no
   * actor and no memory (reason `task`), across restarts; whichever runtime loads it polls the
   * work with the tool's `pollHandle` (first after `pollAfterMs`) until it ends, and its output
   * is the call's. Present only where the runtime can hold the call that way (the tool has
   * `pollHandle`, the call can save a handle).
   */
  detach?(options?: { pollAfterMs?: number }): never;
}

/** What one poll of a call's work elsewhere found (`ToolSpec.pollHandle`): still going, or ended with an output. */
export type HandlePoll<O = unknown> =
  { done: false; pollAfterMs?: number; progress?: ToolProgress } | { done: true; output: O };

/** What `pollHandle` is given: the call, the run's context, and a signal that aborts a poll taking too long. */
export interface PollContext {
  runId: string;
  toolCallId: string;
  signal: AbortSignal;
  context: Readonly<Record<string, unknown>>;
}

/** Thrown by `ToolContext.detach`: the call's work goes on elsewhere, and the run waits for it. */
export class ToolDetached extends Error {
  readonly pollAfterMs: number | undefined;
  constructor(options: { pollAfterMs?: number } = {}) {
    super('The call goes on elsewhere');
    this.name = 'ToolDetached';
    this.pollAfterMs = options.pollAfterMs;
  }
}

/** How far a call has come (`ToolContext.progress`): a count out of a total, and/or a message. */
export interface ToolProgress {
  progress?: number | undefined;
  total?: number | undefined;
  message?: string | undefined;
}

/** A question a tool asks a person. */
export interface ToolQuestion {
  /** The question, as the person reads it. */
  question: string;
  /** The answers to choose from, when the person must pick one. */
  choices?: string[] | undefined;
  /** A JSON Schema the answer must satisfy (without it and without choices: any text). */
  schema?: Record<string, unknown> | undefined;
  /** Who asks, shown with the question (an MCP tool names its server). */
  from?: { server?: string | undefined } | undefined;
}

/** What a person gave to a tool's question that waits in flight (`ToolContext.ask`). */
export type ToolAnswer =
  | { action: 'accept'; answer: unknown; by: string }
  /** The person refused to answer. */
  | { action: 'decline'; by: string; reason: string | null }
  /** No one answered: the wait expired, or the run ended first. */
  | { action: 'cancel'; reason: string };

/** The answer a call runs again with, after the question it asked by `ToolInputRequired`. */
export interface ToolInput {
  answer: unknown;
  by: string;
  /** What the tool gave as `state` with the question (JSON), as it gave it. */
  state: unknown;
}

/**
 * Thrown by a tool that cannot complete without a person's answer and has done nothing yet: the
 * call stops (status `waiting`), the run waits for the answer (reason `input`, holding no memory,
 * across restarts), and the call runs again with it in `ctx.input`, once. A refused or expired
 * question fails the call (the model is told). `state` (JSON) comes back with the answer.
 */
export class ToolInputRequired extends Error {
  readonly question: ToolQuestion;
  readonly state: unknown;
  constructor(question: ToolQuestion, options: { state?: unknown } = {}) {
    super(`Input required: ${question.question}`);
    this.name = 'ToolInputRequired';
    this.question = question;
    this.state = options.state ?? null;
  }
}

/** What `reconcile()` learned: the effect already happened (with its output), or it did not. */
export type Reconciliation<O> = { done: true; output: O } | { done: false };

/**
 * Where a tool comes from when Baton did not declare it itself: an MCP server's tool, with the
 * annotations the server gave and how they became the tool's effect, risk and trust.
 */
export interface ToolOrigin {
  kind: 'mcp';
  /** The server's name (as it introduced itself, or as the application named it). */
  server: string;
  /** The tool's name on that server. */
  tool: string;
  /** The server's annotations, as sent (hints only; absent when it sent none). */
  annotations: Record<string, unknown> | null;
  /** Which of effect, risk and trusted output the application set over the annotations. */
  overridden: string[];
}

/** The limits of a child run an agent tool starts: each one a slice of what its parent has left, never more. */
export interface ChildBudget {
  maxSteps?: number;
  maxLlmCalls?: number;
  maxToolCalls?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  timeoutMs?: number;
}

/**
 * The agent a call of an agent tool (`agentTool`) hands its work to: a call starts a child run of
 * that agent instead of running `execute`, and the child's answer is the call's result. Declared
 * here loosely (an agent's planner and policy belong to layers above the tools); the runtime
 * checks it when it is created.
 */
export interface AgentDelegate {
  /** The agent, as `defineAgent` declares it: a name, instructions, tools, a planner, a policy. */
  agent: { readonly name: string; readonly tools: readonly AnyTool[]; readonly [key: string]: unknown };
  /** The child's limits (a slice of what the parent has left). */
  budget?: ChildBudget | undefined;
  /** The child run's input, from the call's parsed arguments. */
  toInput(args: unknown): string;
}

/**
 * Where a call of a handoff tool (`handoff(agent)`) hands the conversation: to `agent`, which then
 * plans the run's next steps with its own instructions and tools; `null` hands it back to the
 * agent below on the run's handoff stack (`handoff.back`). `execute` is not called.
 */
export interface HandoffTarget {
  agent: {
    readonly name: string;
    readonly tools: readonly AnyTool[];
    readonly instructions?: string | undefined;
    readonly [key: string]: unknown;
  } | null;
}

/**
 * The key a limit counts a call under, from its parsed arguments and its run's context (a tenant,
 * a customer, a target host); calls with the same key share the limit, across every runtime on the
 * database. Absent (or null): one key for all the tool's calls.
 */
export type LimitKey<I> = (
  input: I,
  ctx: { runId: string; context: RunUserContext },
) => string | number | null | undefined;

/** At most `limit` calls of a key run at once (`ToolSpec.concurrency`). */
export interface ConcurrencyLimit<I = unknown> {
  limit: number;
  key?: LimitKey<I>;
}

/** At most `limit` calls of a key start per `intervalMs` (`ToolSpec.rate`), a burst of `limit` at most. */
export interface RateLimit<I = unknown> {
  limit: number;
  intervalMs: number;
  key?: LimitKey<I>;
}

/** A tool as declared by its author. */
export interface ToolSpec<I, O> {
  name: string;
  version?: string;
  /**
   * Earlier versions whose recorded calls this version may run as they are. A call decided (or
   * started) with another version than `version` waits for a human otherwise
   * (`tool_version_mismatch`), since the code that runs is not the code the decision was made for.
   */
  compatibleVersions?: readonly string[];
  description: string;
  input: z.ZodType<I>;
  /** The JSON Schema the model is shown for the input; derived from `input` when absent. */
  parameters?: Record<string, unknown>;
  /** Set for tools that come from elsewhere (an MCP server). */
  origin?: ToolOrigin;
  /** Set by `agentTool`: a call starts a child run of this agent (its answer is the result); `execute` is not called. */
  delegate?: AgentDelegate;
  /**
   * Cancels the work a call started elsewhere and saved the handle of (`ToolContext.saveHandle`),
   * when the run ends (cancelled, timed out) while the call still follows it. Best effort.
   */
  cancelHandle?(handle: unknown, ctx: { runId: string; toolCallId: string }): Promise<void>;
  /**
   * Looks once at the work a call left running elsewhere and saved the handle of (after
   * `ctx.detach`): still going (and when to look again, how far it has come), or ended with the
   * call's output. Throws `ToolFailedError` when the work failed (the model is told),
   * `ToolUnavailableError` when it cannot be reached now (it is polled again later), and
   * anything else when the work is gone or its outcome cannot be known (the call's outcome is
   * then unknown, resolved by its effect class).
   */
  pollHandle?(handle: unknown, ctx: PollContext): Promise<HandlePoll<O>>;
  /** Set by `handoff`: a call hands the run's conversation to another agent (or back); `execute` is not called. */
  handoff?: HandoffTarget;
  output?: z.ZodType<O>;
  effect: Effect;
  risk: Risk;
  timeoutMs?: number;
  maxOutputBytes?: number;
  /**
   * Whether the tool's output can be trusted (default true). A tool that returns outside
   * content (web pages, mails, files others can write) sets false: once such output is in a
   * run, the default policy asks a human before any tool that is not `read`.
   */
  trustedOutput?: boolean;
  /** Whether a person may edit the arguments when approving a call (default true); false makes `edit` a 409. */
  allowEdit?: boolean;
  /** How long an approval of this tool's calls waits (ms) before `onExpire` applies (default: the run's, else never). */
  expiresIn?: number;
  onExpire?: OnExpire;
  /**
   * At most `limit` calls of a key at once, across every runtime on the database. A call over the
   * limit waits before it starts (a `throttled` event), holding no worker's room; a slot is a lease,
   * so a crashed worker's come back. A call waits the same way while its key backs off after a
   * `ToolRateLimitedError`.
   */
  concurrency?: ConcurrencyLimit<I>;
  /** At most `limit` calls of a key started per `intervalMs`, across every runtime on the database. */
  rate?: RateLimit<I>;
  execute(input: I, ctx: ToolContext): Promise<O> | O;
  reconcile?(input: I, ctx: ToolContext): Promise<Reconciliation<O>> | Reconciliation<O>;
  /**
   * Undoes a completed call (moves the archived files back, refunds the charge) when its run is
   * cancelled, or rejected with `terminate`, and the caller asks for compensation. It is called
   * with the call's input and output; `ctx.idempotencyKey` is the compensation's own ledger id,
   * the same for every attempt. It must be safe after a crash mid-way: see `compensateEffect`.
   */
  compensate?(input: I, output: O, ctx: ToolContext): Promise<unknown> | unknown;
  /**
   * How an interrupted compensation is resumed: `idempotent` (default: called again with the
   * same key) or `reconcilable` (`reconcileCompensation` is asked first whether it took effect).
   */
  compensateEffect?: 'idempotent' | 'reconcilable';
  reconcileCompensation?(
    input: I,
    output: O,
    ctx: ToolContext,
  ): Promise<Reconciliation<unknown>> | Reconciliation<unknown>;
}

/** A tool with every default filled in. */
export interface Tool<I = unknown, O = unknown> extends ToolSpec<I, O> {
  version: string;
  timeoutMs: number;
  maxOutputBytes: number;
  trustedOutput: boolean;
}

/** Any tool, whatever its input and output types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;

const NAME = /^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/;

/**
 * Declares a tool.
 * @example
 * const readFile = defineTool({
 *   name: 'fs.read', description: 'Read a file', input: z.object({ path: z.string() }),
 *   effect: 'read', risk: 'low', execute: ({ path }) => readFileSync(path, 'utf8'),
 * });
 */
export function defineTool<I, O>(spec: ToolSpec<I, O>): Tool<I, O> {
  if (!NAME.test(spec.name)) fail('input.invalid', `Tool name '${spec.name}' must match ${NAME}`);
  if (spec.effect === 'reconcilable' && !spec.reconcile) {
    fail('input.invalid', `Tool '${spec.name}' is reconcilable but has no reconcile()`);
  }
  if (spec.compensate && spec.effect === 'read') {
    fail('input.invalid', `Tool '${spec.name}' is read-only: there is nothing for compensate() to undo`);
  }
  if ((spec.compensateEffect || spec.reconcileCompensation) && !spec.compensate) {
    fail('input.invalid', `Tool '${spec.name}' describes a compensation but has no compensate()`);
  }
  if (spec.compensateEffect && spec.compensateEffect !== 'idempotent' && spec.compensateEffect !== 'reconcilable') {
    fail('input.invalid', `Tool '${spec.name}': a compensation must be idempotent or reconcilable`);
  }
  checkLimit(spec.name, 'concurrency', spec.concurrency);
  checkLimit(spec.name, 'rate', spec.rate);
  if (spec.compensateEffect === 'reconcilable' && !spec.reconcileCompensation) {
    fail('input.invalid', `Tool '${spec.name}' has a reconcilable compensation but no reconcileCompensation()`);
  }
  return {
    ...spec,
    version: spec.version ?? '1',
    timeoutMs: spec.timeoutMs ?? DEFAULTS.toolTimeoutMs,
    maxOutputBytes: spec.maxOutputBytes ?? DEFAULTS.maxOutputBytes,
    trustedOutput: spec.trustedOutput ?? true,
  };
}

/** Refuses a limit that is not a positive whole number of calls (per a positive interval), with a key function if any. */
export function checkLimit(owner: string, name: 'concurrency' | 'rate', limit: unknown): void {
  if (limit === undefined) return;
  const spec = limit as Partial<RateLimit<unknown>> | null;
  const where = `${owner}: ${name}`;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    fail('input.invalid', `${where} must be an object with a limit`);
  }
  const known = name === 'rate' ? ['limit', 'intervalMs', 'key'] : ['limit', 'key'];
  const unknown = Object.keys(spec).filter((field) => !known.includes(field));
  if (unknown.length > 0) fail('input.invalid', `${where} has no ${unknown.join(', ')} (it takes ${known.join(', ')})`);
  if (!Number.isSafeInteger(spec.limit) || (spec.limit as number) < 1) {
    fail(
      'input.invalid',
      `${where}.limit must be a whole number of calls, 1 or more (got ${JSON.stringify(spec.limit)})`,
    );
  }
  const interval = spec.intervalMs;
  if (name === 'rate' && (typeof interval !== 'number' || !(interval > 0) || !Number.isFinite(interval))) {
    fail(
      'input.invalid',
      `${where}.intervalMs must be a positive number of milliseconds (got ${JSON.stringify(interval)})`,
    );
  }
  if (spec.key !== undefined && typeof spec.key !== 'function')
    fail('input.invalid', `${where}.key must be a function`);
}

/** Thrown by a tool to say it is temporarily unavailable and nothing happened: retried with backoff. */
export class ToolUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolUnavailableError';
  }
}

/**
 * Thrown by a tool whose service refused the call for its rate (an HTTP 429) and did nothing:
 * the tool's limit keys (`concurrency`, `rate`) back off for every runtime — for `retryAfterMs`
 * when the service said, else a second doubled with each 429 in a row — and the call waits
 * (`throttled`) and tries again, within its timeout (an `unsafe` tool's call is not retried: the
 * model is told).
 */
export class ToolRateLimitedError extends ToolUnavailableError {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: { retryAfterMs?: number } = {}) {
    super(message);
    this.name = 'ToolRateLimitedError';
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Thrown by a tool that knows it cannot tell whether its effect happened (the connection to the
 * service was lost while the request was in flight): an unknown outcome, `tool.outcome_unknown`,
 * resolved by the tool's effect class like any other.
 */
export class ToolOutcomeUnknownError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolOutcomeUnknownError';
  }
}

/** Thrown by a tool to report a failure the model may work around; `retryable` tells it whether to try again. */
export class ToolFailedError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable?: boolean } = {}) {
    super(message);
    this.name = 'ToolFailedError';
    this.retryable = options.retryable ?? false;
  }
}
