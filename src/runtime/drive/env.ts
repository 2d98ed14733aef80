/** What the runtime's actors share: the store, the planner, the tools, the policy and the live runs. */
import type { Decision, Planner, PlannerTool } from '../../planner/types.js';
import type { Policy } from '../../policy/index.js';
import type { MessageRow, Store } from '../../store/index.js';
import type { AnyTool, ChildBudget, RunUserContext } from '../../tools/define-tool.js';
import type { Transcript, WaitExpiryOptions } from '../model/types.js';
import type { RunDriver } from './run-driver.js';
import type { Limiter, PlannerLimits } from './limiter.js';

/** A run being driven by this runtime, with the data its actors read at every step. */
export interface LiveRun {
  driver: RunDriver;
  sessionId: string;
  input: string;
  context: RunUserContext;
  /** The session's committed history, loaded once: it cannot change while this run is active. */
  history?: MessageRow[];
  /** The run's context so far, kept between steps so each step builds only what is new. */
  transcript?: Transcript;
  /** How long the run's human waits last unless a tool, policy or question says (its start options). */
  waits?: WaitExpiryOptions | undefined;
  /** For a fork: its source, and the terms it was made with (a given decision, whether it may repeat effects). */
  fork?: LiveFork | undefined;
  /** The agent the run belongs to (its planner and tools plan and run its steps); null: the runtime's own. */
  agent?: string | null | undefined;
  /** For a child run (an agent called as a tool): its parent and the parent's call that started it. */
  parent?: { runId: string; callId: string } | undefined;
  /** Set while a poll of its call's work elsewhere (a task wait) is under way: it stays in memory until the poll's outcome is staged. */
  polling?: boolean;
}

/** What a fork's actors read of its terms. */
export interface LiveFork {
  sourceRunId: string;
  step: number;
  repeatEffects: 'ask' | 'allow';
  decision: Decision | null;
  by: string | null;
  /** The memory version the source's planner read at the fork's step: the fork's step reads it too (null: the last). */
  memoryVersion: number | null;
  /** The session memories beneath the fork's own (its source's, as of the fork), oldest first. */
  memoryBases: readonly { scope: string; version: number }[];
}

/** What a call of an agent tool asks for: the child run of that call (its id is the call's). */
export interface ChildRequest {
  /** The parent's ledger call that starts the child. */
  callId: string;
  /** The agent the child belongs to. */
  agent: string;
  input: string;
  /** The child's own limits, each cut to what the parent has left. */
  budget?: ChildBudget | undefined;
  /** Tool calls the parent has made, this one included (its context does not count them yet). */
  toolCalls: number;
}

/** Starting child runs, for the executor: the registry's, given to the actors through the environment. */
export interface ChildStarter {
  /** Creates and commits the child of a call (once: a second call finds the first) and drives it; its id. */
  start(parent: LiveRun, request: ChildRequest): Promise<string>;
  /**
   * Cancels the parent's children still active, newest first, each undoing its own completed
   * calls first (and its children theirs), and resolves once all of them have ended.
   */
  undoChildren(parent: LiveRun, signal: AbortSignal): Promise<void>;
}

/** Where a test harness may hold a run: at the start of each actor, before it produces its event. */
export interface RuntimeHooks {
  beforeActor?(info: {
    actor: 'planner' | 'executor';
    runId: string;
    stepIndex: number;
    signal: AbortSignal;
  }): Promise<void> | void;
}

/** An agent whose runs a runtime drives: what plans its steps, the tools they call, who may run what. */
export interface AgentEnv {
  name: string;
  planner: Planner;
  tools: ReadonlyMap<string, AnyTool>;
  toolSpecs: PlannerTool[];
  policy: Policy | undefined;
  /** What its model is told, when known (a digest goes on the handoff stack). */
  instructions?: string | null;
}

/** The agent that drives a run: the one its row names, else the runtime's own. */
export function agentOf(env: RuntimeEnv, live: Pick<LiveRun, 'agent'>): AgentEnv {
  return (live.agent ? env.agents.get(live.agent) : undefined) ?? env;
}

/** An agent of this runtime by name (its own included), if it has one of that name. */
export function agentNamed(env: RuntimeEnv, name: string): AgentEnv | undefined {
  return name === env.name ? env : env.agents.get(name);
}

/**
 * The agent that planned a step of a run, whose tools and policy its calls run with: the one its
 * journal entry names (the top of the handoff stack when it was planned), else the run's own.
 */
export function stepAgentOf(env: RuntimeEnv, live: LiveRun, stepIndex: number): AgentEnv {
  const name = live.driver.memory.journal.get(stepIndex)?.agent;
  return (name ? agentNamed(env, name) : undefined) ?? agentOf(env, live);
}

/** The agent that planned a step when this runtime does not have it (a handoff's, in another deployment); else null. */
export function missingStepAgent(env: RuntimeEnv, live: LiveRun, stepIndex: number): string | null {
  const name = live.driver.memory.journal.get(stepIndex)?.agent;
  return name && !agentNamed(env, name) ? name : null;
}

/**
 * The runtime's shared dependencies, as its actors see them. Its own planner, tools and policy
 * are its agent's; `agents` has every agent it drives runs of (its own, and those its agent tools
 * call), by name.
 */
export interface RuntimeEnv extends AgentEnv {
  store: Store;
  agents: ReadonlyMap<string, AgentEnv>;
  hooks: RuntimeHooks | undefined;
  /** Token budget of the context a planner is given at each step. */
  contextTokens: number;
  /** Per-key limits shared with every runtime on the database (`limiter.ts`). */
  limiter: Limiter;
  /** The limits on planner calls, if any (`createRuntime({ limits: { planner } })`). */
  plannerLimits: PlannerLimits | undefined;
  /** Starts the child runs of agent tools (wired once the registry exists). */
  children: ChildStarter;
  live(runId: string): LiveRun;
}
