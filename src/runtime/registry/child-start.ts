/**
 * Starting a child run: the run of the agent an agent tool's call hands its work to, made once
 * (its id is the call's with `.child`: a second attempt finds the first), with the parent's
 * context and a budget of its own cut to what the parent has left, committed in its own unit
 * and driven here at once.
 */
import type { MachineLimits } from '../../../machines/types.js';
import { isUniqueViolation, type RunRow } from '../../store/index.js';
import type { ChildBudget } from '../../tools/define-tool.js';
import { createDriver } from '../drive/run-driver.js';
import type { ChildRequest, LiveRun } from '../drive/env.js';
import { childRunId, hashOf } from '../model/ids.js';
import { agentIdentity } from './agent-identity.js';
import type { RunMachineDefinition } from '../../../machines/variants.js';
import type { Store } from '../../store/index.js';
import type { RuntimeEnv } from '../drive/env.js';
import type { RunDefaults } from '../model/types.js';
import type { RunRegistry } from './run-registry.js';
import { planNewRun, stageCreation, toNewRow } from './new-run.js';

/** What is left of a limit once `used` is spent; null when there is none. */
function left(limit: number | null, used: number): number | undefined {
  return limit === null ? undefined : Math.max(0, limit - used);
}

/** The smaller of two optional limits. */
function least(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** A child's budget: its own, each limit cut to what its parent has left. */
function sliceOf(parent: LiveRun, own: ChildBudget | undefined, toolCalls: number) {
  const ctx = parent.driver.context();
  const limits: MachineLimits = ctx.limits;
  const timeLeft = ctx.deadlineAt === null ? undefined : Math.max(1, ctx.deadlineAt - Date.now());
  const budget = {
    maxLlmCalls: least(own?.maxLlmCalls, left(limits.maxLlmCalls, ctx.llmCalls)),
    maxToolCalls: least(own?.maxToolCalls, left(limits.maxToolCalls, toolCalls)),
    maxTokens: least(own?.maxTokens, left(limits.maxTokens, ctx.tokens)),
    maxCostUsd: least(own?.maxCostUsd, left(limits.maxCostUsd, ctx.costUsd)),
    timeoutMs: least(own?.timeoutMs, timeLeft),
  };
  return Object.fromEntries(Object.entries(budget).filter(([, value]) => value !== undefined));
}

/** What starting child runs needs from the runtime. */
export interface ChildStartDeps {
  store: Store;
  env: RuntimeEnv;
  registry: RunRegistry;
  owner: string;
  definition: RunMachineDefinition;
  leaseMs: number;
  defaults: RunDefaults | undefined;
}

/** Creates the way a runtime starts child runs. */
export function createChildStart(deps: ChildStartDeps): (parent: LiveRun, request: ChildRequest) => Promise<string> {
  const { store, env, registry } = deps;
  /** Creates the child of a call, once, and drives it here. */
  async function start(parent: LiveRun, request: ChildRequest): Promise<string> {
    const id = childRunId(request.callId);
    if (await store.getRun(id)) return id;
    const agent = env.agents.get(request.agent);
    if (!agent) throw new Error(`Agent '${request.agent}' is not one this runtime drives`);
    const own = request.budget;
    const run = planNewRun(
      {
        input: request.input,
        // A session of its own, named after it (briefly: a deep child's id is long).
        sessionId: `ses_child_${hashOf(id).slice(0, 32)}`,
        context: parent.context,
        options: {
          ...(own?.maxSteps !== undefined ? { maxSteps: own.maxSteps } : {}),
          budget: sliceOf(parent, own, request.toolCalls),
          ...(parent.driver.context().limits.onBudgetExceeded === 'ask' ? { onBudgetExceeded: 'ask' as const } : {}),
          ...(parent.waits?.expiresIn !== undefined ? { expiresIn: parent.waits.expiresIn } : {}),
          ...(parent.waits?.onExpire !== undefined ? { onExpire: parent.waits.onExpire } : {}),
        },
      },
      deps.defaults,
    );
    run.runId = id;
    const driver = createDriver(registry.driverDeps, id, {
      kind: 'new',
      input: { runId: id, limits: run.limits, deadlineAt: run.deadlineAt },
    });
    const identity = agentIdentity(agent.name, [...agent.tools.values()]);
    const row: RunRow = {
      ...toNewRow(
        run,
        JSON.stringify(driver.actor.getPersistedSnapshot()),
        deps.owner,
        deps.definition,
        deps.leaseMs,
        identity,
      ),
      parent_run_id: parent.driver.runId,
      parent_call_id: request.callId,
    };
    stageCreation(driver, run, row);
    try {
      await driver.flush();
    } catch (error) {
      // Made meanwhile (by this same call, resumed elsewhere): that one is the child.
      if (isUniqueViolation(error) && (await store.getRun(id))) return id;
      throw error;
    }
    registry.register(row, driver);
    driver.start();
    driver.actor.send({ type: 'start' });
    return id;
  }
  return start;
}
