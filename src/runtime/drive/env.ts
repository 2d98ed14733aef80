/** What the runtime's actors share: the store, the planner, the tools, the policy and the live runs. */
import type { Decision, Planner, PlannerTool } from '../../planner/types.js';
import type { Policy } from '../../policy/index.js';
import type { MessageRow, Store } from '../../store/index.js';
import type { AnyTool, RunUserContext } from '../../tools/define-tool.js';
import type { Transcript, WaitExpiryOptions } from '../model/types.js';
import type { RunDriver } from './run-driver.js';

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
}

/** What a fork's actors read of its terms. */
export interface LiveFork {
  sourceRunId: string;
  step: number;
  repeatEffects: 'ask' | 'allow';
  decision: Decision | null;
  by: string | null;
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

/** The runtime's shared dependencies, as its actors see them. */
export interface RuntimeEnv {
  store: Store;
  planner: Planner;
  tools: ReadonlyMap<string, AnyTool>;
  toolSpecs: PlannerTool[];
  policy: Policy | undefined;
  hooks: RuntimeHooks | undefined;
  /** Token budget of the context a planner is given at each step. */
  contextTokens: number;
  live(runId: string): LiveRun;
}
