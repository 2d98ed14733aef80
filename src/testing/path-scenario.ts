/**
 * Turns a model path into what makes the real runtime take it: a planner that decides each
 * step so the executor produces the next event, tools with known effects, and the options the
 * run starts with (its limits, whether a budget that runs out asks a person, and the expiry of
 * the one wait that expires in the path).
 */
import { statusOf } from '../../machines/run-status.js';
import type { Risk, RunEvent } from '../../machines/types.js';
import { createScriptedPlanner } from '../planner/scripted-planner.js';
import type { PlannerDecision } from '../planner/types.js';
import type { Policy } from '../policy/index.js';
import type { Budget, RunOptions } from '../runtime/model/types.js';
import type { AnyTool } from '../tools/define-tool.js';
import { createPathTools, type PathToolTerms } from './path-tools.js';
import { agentTool } from '../agent/agent-tool.js';
import { defineAgent, type Agent } from '../agent/define-agent.js';
import { LOOP_SIGNATURE, MODEL_LIMITS, type RunPath } from './run-model.js';

/** Deadline of runs whose path ends in `timeout`: long enough to reach the held actor first. */
export const MODEL_TIMEOUT_MS = 1_000;

/** How long the wait that expires in a path lasts: long enough to check the wait first. */
export const MODEL_EXPIRES_MS = 1_000;

/** The time a person gives a run that waits on its deadline: well past the end of its path. */
export const MODEL_EXTENSION_MS = 60_000;

type StepPlan =
  | 'final'
  | 'ok'
  | 'invalid'
  | 'guarded'
  | 'destroy'
  | 'timed'
  | 'fragile'
  | 'explode'
  | 'ask'
  | 'delegate'
  | 'remote'
  | 'throw';

/** The tools, planner, policy and limits that make the runtime follow one path. */
export interface PathScenario {
  planner: ReturnType<typeof createScriptedPlanner>;
  tools: AnyTool[];
  policy: Policy;
  maxSteps: number;
  budget: Budget;
  /** What the path's run starts with: `maxSteps`, `budget`, and the human side's options. */
  options: RunOptions;
  /** Effects of the tools, recorded outside Baton's database: `tool:idempotency key`. */
  effects: string[];
  /** Resolves when the `fragile` tool's first attempt has started (and hangs). */
  fragileStarted: Promise<void>;
  /** The agent the `delegate` step calls as a tool: its child runs answer once the path lets them. */
  helper: Agent;
  /** Lets a child run answer (the path's `child_ended`), now or as soon as it asks its planner. */
  endChild(runId: string): void;
  /** Lets the work a call left running elsewhere end (the path's `task_ended`): its next poll finds it done. */
  endTask(toolCallId: string): void;
}

/** What the planner decides at a step so that the executor produces `next` (`expires`: its wait expires). */
function planFor(next: RunEvent | undefined, expires: boolean): StepPlan {
  if (next === undefined) return 'ok';
  switch (next.type) {
    case 'next_step':
      return next.loopSignature === LOOP_SIGNATURE ? 'invalid' : 'ok';
    case 'done':
      return 'final';
    case 'need_approval':
      if (next.reason === 'child') return 'delegate';
      if (next.reason === 'task') return 'remote';
      if (next.reason !== 'approval') return 'fragile';
      if (expires) return 'timed';
      return next.risk === 'destructive' ? 'destroy' : 'guarded';
    case 'need_input':
      return 'ask';
    case 'exec_error':
      return 'explode';
    default:
      // cancel, timeout and budget_exceeded reach the executor while it is held at its gate.
      return 'ok';
  }
}

const DECISIONS: Record<Exclude<StepPlan, 'throw'>, (step: number) => PlannerDecision> = {
  final: () => ({ type: 'final', answer: 'model path done' }),
  ok: (n) => ({ type: 'tool_calls', calls: [{ tool: 'ok', args: { n } }] }),
  // The same invalid call every time: a loop the runtime must detect.
  invalid: () => ({ type: 'tool_calls', calls: [{ tool: 'ok', args: { n: 'not a number' } }] }),
  guarded: (n) => ({ type: 'tool_calls', calls: [{ tool: 'guarded', args: { n } }] }),
  destroy: (n) => ({ type: 'tool_calls', calls: [{ tool: 'destroy', args: { n } }] }),
  timed: (n) => ({ type: 'tool_calls', calls: [{ tool: 'timed', args: { n } }] }),
  ask: (n) => ({ type: 'ask', question: `Which number for step ${n}?` }),
  fragile: (n) => ({ type: 'tool_calls', calls: [{ tool: 'fragile', args: { n } }] }),
  explode: () => ({ type: 'tool_calls', calls: [{ tool: 'explode', args: {} }] }),
  delegate: (n) => ({ type: 'tool_calls', calls: [{ tool: 'agent.helper', args: { input: `help with step ${n}` } }] }),
  remote: (n) => ({ type: 'tool_calls', calls: [{ tool: 'remote', args: { n } }] }),
};

/** True when a step enters a wait for a person. */
function opensWait(step: RunPath['steps'][number]): boolean {
  return statusOf(step.after.value) === 'waiting_human' && statusOf(step.before.value) !== 'waiting_human';
}

/** The one wait of a path that expires: the step that opened it, what holds its terms, its outcome. */
interface ExpiringWait {
  opener: number;
  holder: 'tool' | 'ask' | 'run';
  outcome: 'reject' | 'end';
  risk: Risk;
}

/**
 * Finds the wait that expires in the path. Its terms go where they reach that wait alone: the
 * `timed` tool for a step's approval, the question tool for a question, the run's options for a
 * budget wait; a path whose terms would reach another of its waits is refused.
 */
function expiringWait(path: RunPath): ExpiringWait | undefined {
  const at = path.steps.flatMap((step, i) => (step.event.type === 'expired' ? [i] : []));
  if (at.length === 0) return undefined;
  if (at.length > 1) throw new Error(`runPath expires one wait per path; this one expires ${at.length}`);
  const expired = path.steps[at[0]!]!.event as Extract<RunEvent, { type: 'expired' }>;
  const opener = path.steps.slice(0, at[0]).findLastIndex(opensWait);
  const opened = path.steps[opener]?.event;
  const waits = path.steps.filter(opensWait).map((step) => step.event.type);
  let holder: ExpiringWait['holder'] = 'run';
  if (opened?.type === 'need_approval') {
    if (opened.reason !== 'approval') throw new Error(`runPath: a wait on '${opened.reason}' never expires`);
    holder = 'tool';
  } else if (opened?.type === 'need_input') holder = 'ask';
  if (
    (holder === 'ask' && waits.filter((type) => type === 'need_input').length > 1) ||
    (holder === 'run' && waits.length > 1)
  ) {
    throw new Error("runPath: the expiry of this path's wait would reach another of its waits");
  }
  const risk = opened?.type === 'need_approval' ? (opened.risk ?? 'high') : 'high';
  return { opener, holder, outcome: expired.outcome, risk };
}

/** The budgets that make each `budget_exceeded` and `timeout` of the path happen where it says. */
function budgetOf(path: RunPath): Budget {
  const budget: Budget = {};
  let executedCalls = 0;
  let plannerCalls = 0;
  for (const { event, before } of path.steps) {
    if (event.type === 'plan_ready') plannerCalls += 1;
    if (event.type === 'next_step' && event.loopSignature === null) executedCalls += 1;
    // A child's usage is its parent's: its planner calls count against the parent's budget.
    if (event.type === 'child_ended') plannerCalls += event.usage.llmCalls;
    if (event.type === 'timeout') budget.timeoutMs = MODEL_TIMEOUT_MS;
    if (event.type === 'budget_exceeded') {
      if (statusOf(before.value) === 'planning') budget.maxLlmCalls ??= plannerCalls;
      else budget.maxToolCalls ??= executedCalls;
    }
  }
  return budget;
}

/** Builds the scenario of a path. */
export function createPathScenario(path: RunPath): PathScenario {
  const plans = new Map<number, StepPlan>();
  const expiring = expiringWait(path);
  path.steps.forEach(({ event, before }, i) => {
    if (event.type === 'plan_ready')
      plans.set(before.context.stepIndex, planFor(path.steps[i + 1]?.event, expiring?.opener === i + 1));
    if (event.type === 'plan_error') plans.set(before.context.stepIndex, 'throw');
  });
  const budget = budgetOf(path);
  const limits = path.steps[0]?.before.context.limits;
  const maxSteps = limits?.maxSteps ?? MODEL_LIMITS.maxSteps;
  const terms = expiring ? { expiresIn: MODEL_EXPIRES_MS, onExpire: expiring.outcome } : undefined;
  const options: RunOptions = {
    maxSteps,
    budget,
    ...(limits?.onBudgetExceeded === 'ask' ? { onBudgetExceeded: 'ask' as const } : {}),
    ...(expiring?.holder === 'run' ? terms : {}),
  };
  const toolTerms: PathToolTerms = {
    ...(expiring?.holder === 'tool' ? { timed: { risk: expiring.risk, terms: terms! } } : {}),
    ...(expiring?.holder === 'ask' ? { ask: terms! } : {}),
  };

  const effects: string[] = [];
  let startedFragile: () => void = () => undefined;
  const fragileStarted = new Promise<void>((resolve) => (startedFragile = resolve));
  const record = (tool: string, key: string) => {
    if (!effects.includes(`${tool}:${key}`)) effects.push(`${tool}:${key}`);
  };
  // Each child run answers only once the path says it ends (after any restart too).
  const ended = new Set<string>();
  const waitingChildren = new Map<string, () => void>();
  const endChild = (runId: string) => {
    ended.add(runId);
    waitingChildren.get(runId)?.();
  };
  const helper = defineAgent({
    name: 'helper',
    instructions: 'Helps with a step.',
    tools: [],
    planner: {
      async next(request) {
        if (!ended.has(request.runId)) {
          await new Promise<void>((resolve) => waitingChildren.set(request.runId, resolve));
        }
        return {
          decision: { type: 'final', answer: `helped: ${request.input}` },
          usage: { inputTokens: 1, outputTokens: 1 },
        };
      },
    },
  });
  // The work each `remote` call left running ends only once the path says so.
  const endedTasks = new Set<string>();
  const tools = [
    ...createPathTools(
      toolTerms,
      record,
      () => startedFragile(),
      (id) => endedTasks.has(id),
    ),
    agentTool(helper),
  ];
  const policy: Policy = ({ tool }) => {
    if (tool.name === 'explode') throw new Error('policy bug: explode');
    return tool.risk === 'destructive' ? 'needs_approval' : undefined;
  };
  const planner = createScriptedPlanner((request) => {
    // Past the path, the run is drained: the model answers.
    const plan = plans.get(request.stepIndex) ?? 'final';
    if (plan === 'throw') throw new Error(`scripted planner failure at step ${request.stepIndex}`);
    return DECISIONS[plan](request.stepIndex);
  });
  const endTask = (toolCallId: string) => void endedTasks.add(toolCallId);
  return { planner, tools, policy, maxSteps, budget, options, effects, fragileStarted, helper, endChild, endTask };
}
