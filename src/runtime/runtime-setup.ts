/**
 * What `createRuntime` does before it answers anything: it checks its options (the zod in use,
 * the machine, the tool names, the agent name) before the database is opened, then wires the
 * machine's actors, the tracer and the run registry around the opened store.
 */
import { cancelCutOffHandles } from './steps/cut-off-handles.js';
import type { RunMachine } from '../../machines/run-machine.js';
import { batonRunMachine, checkRunMachine, type RunMachineDefinition } from '../../machines/variants.js';
import { DEFAULTS } from '../defaults.js';
import { fail, toFailure } from '../failure.js';
import type { Store } from '../store/index.js';
import { checkLimit, type AnyTool } from '../tools/define-tool.js';
import { createLimiter } from './drive/limiter.js';
import { createScheduling, type Scheduling } from './registry/schedules.js';
import type { Run, StartRequest } from './model/types.js';
import type { AgentEnv, RuntimeEnv } from './drive/env.js';
import { assertSupportedZod } from './ledger/supported-zod.js';
import { plannerTools } from './ledger/tool-registry.js';
import type { EventHub } from './model/event-hub.js';
import { createRunTracer, type RunTracer } from './observe/otel.js';
import { agentIdentity, DEFAULT_AGENT, type AgentIdentity } from './registry/agent-identity.js';
import { collectAgents } from './registry/agents.js';
import { createChildRuns, type ChildRuns } from './registry/child-runs.js';
import { expireWait } from './ledger/approvals.js';
import { checkTask } from './steps/task-wait.js';
import { createRunRegistry, type RunRegistry } from './registry/run-registry.js';
import type { RuntimeOptions } from './runtime-api.js';
import { deadlineActor, timerActor } from './steps/deadline-actor.js';
import { createExecutorActor } from './steps/executor-actor.js';
import { createPlannerActor } from './steps/planner-actor.js';

/** A runtime's options once checked: the machine it drives, its tools by name, its agent. */
export interface CheckedOptions {
  definition: RunMachineDefinition;
  tools: ReadonlyMap<string, AnyTool>;
  agent: AgentIdentity;
  /** The other agents whose runs it drives (those its agent tools hand work to), by name. */
  agents: ReadonlyMap<string, AgentEnv>;
}

/** Checks what can be refused before the database is opened; throws `machine.incompatible` or `input.invalid`. */
export function checkOptions(options: RuntimeOptions): CheckedOptions {
  assertSupportedZod();
  const definition = options.machine ?? batonRunMachine;
  const problems = checkRunMachine(definition);
  if (problems.length > 0) {
    fail(
      'machine.incompatible',
      `The run machine${typeof definition.name === 'string' ? ` '${definition.name}'` : ''} cannot be driven: ${problems.join('; ')}`,
      { details: { machine: definition.name, problems } },
    );
  }
  if (!Array.isArray(options.tools)) {
    fail('input.invalid', `createRuntime needs 'tools', an array of tools (defineTool); [] for none`);
  }
  const tools = new Map(options.tools.map((t) => [t.name, t]));
  if (tools.size !== options.tools.length) fail('input.invalid', 'Two tools share a name');
  if (options.agent !== undefined && !/^[a-z][a-z0-9-]{0,63}$/.test(options.agent)) {
    fail('input.invalid', `Agent name '${options.agent}' must match /^[a-z][a-z0-9-]{0,63}$/`);
  }
  checkLimits(options);
  const own = options.agent ?? DEFAULT_AGENT;
  const agents = collectAgents(own, options.tools, options.agents);
  return { definition, tools, agents, agent: agentIdentity(own, options.tools, [...agents.keys()]) };
}

/** Refuses limits that are not positive whole numbers (`input.invalid`), before anything is opened. */
function checkLimits(options: RuntimeOptions): void {
  const limits = options.limits as Record<string, unknown> | undefined;
  if (limits === undefined) return;
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(limits)) fail('input.invalid', `createRuntime's 'limits' must be an object`);
  const unknown = Object.keys(limits).filter((field) => field !== 'planner' && field !== 'runsPerTenant');
  if (unknown.length > 0) {
    fail(
      'input.invalid',
      `limits has no ${unknown.join(', ')} (it takes planner, runsPerTenant; a tool declares its own)`,
    );
  }
  const planner = limits.planner as Record<string, unknown> | undefined;
  if (planner !== undefined) {
    if (!isObject(planner)) fail('input.invalid', 'limits.planner must be an object with concurrency and/or rate');
    const extra = Object.keys(planner).filter((field) => field !== 'concurrency' && field !== 'rate');
    if (extra.length > 0)
      fail('input.invalid', `limits.planner has no ${extra.join(', ')} (it takes concurrency, rate)`);
    checkLimit('limits.planner', 'concurrency', planner.concurrency);
    checkLimit('limits.planner', 'rate', planner.rate);
  }
  const cap = limits.runsPerTenant;
  if (cap !== undefined && (!Number.isSafeInteger(cap) || (cap as number) < 1)) {
    fail(
      'input.invalid',
      `limits.runsPerTenant must be a whole number of runs, 1 or more (got ${JSON.stringify(cap)})`,
    );
  }
}

/** What the runs of a runtime are driven with, besides its checked options. */
export interface WiringBase extends CheckedOptions {
  store: Store;
  hub: EventHub;
  owner: string;
  leaseMs: number;
}

/** The wired parts: what the actors share, the registry of live runs, the tracer (unless tracing is off). */
export interface Wiring {
  env: RuntimeEnv;
  registry: RunRegistry;
  tracer: RunTracer | null;
  /** The child runs of agent tools: started, handed to their parents, ended with them. */
  children: ChildRuns;
}

/** Gives the machine its actors and builds the registry that drives runs with it. */
export function wireRuns(options: RuntimeOptions, base: WiringBase): Wiring {
  const { store, hub, definition } = base;
  const env: RuntimeEnv = {
    store,
    name: base.agent.name,
    agents: base.agents,
    planner: options.planner,
    tools: base.tools,
    toolSpecs: plannerTools(options.tools),
    policy: options.policy,
    hooks: options.hooks,
    contextTokens: options.contextTokens ?? DEFAULTS.contextTokens,
    limiter: createLimiter(store, base.owner, base.leaseMs, (error) =>
      options.onError?.(toFailure(error), { activity: 'renewing limit slots' }),
    ),
    plannerLimits: options.limits?.planner,
    // Bound below, once the registry that drives the children exists.
    children: {
      start: (parent, request) => children.start(parent, request),
      undoChildren: (parent, signal) => children.undoChildren(parent, signal),
    },
    live(runId) {
      const run = registry.get(runId);
      if (!run) fail('run.closed', `Run '${runId}' is not driven by this runtime`);
      return run;
    },
  };
  // Checked by `checkOptions`: a variant keeps the states, actors, events and context the runtime uses.
  const machine = definition.machine.provide({
    actors: {
      planner: createPlannerActor(env),
      executor: createExecutorActor(env),
      deadline: deadlineActor,
      timer: timerActor,
    },
  }) as RunMachine;
  // Spans of the runs driven here, from what they commit (no-ops unless the application registered a tracer provider).
  const tracer =
    options.tracing === false ? null : createRunTracer(store, options.tracing === true ? {} : (options.tracing ?? {}));
  const registry = createRunRegistry({
    store,
    hub,
    owner: base.owner,
    leaseMs: base.leaseMs,
    definition,
    agent: base.agent,
    driver: {
      store,
      hub,
      machine,
      machineVersion: definition.version,
      inspect: options.inspect,
      ...(tracer ? { onCommitted: tracer.committed } : {}),
    },
    ...(options.onError ? { onError: options.onError } : {}),
    expire: (run, approvalId) => expireWait(env, run, approvalId),
    checkTask: (run, approvalId) =>
      void checkTask(env, run, approvalId).catch((error: unknown) => {
        // A runtime closing, or a run another runtime took meanwhile: whoever drives it polls next.
        const failure = toFailure(error);
        if (failure.code === 'run.closed' || failure.code === 'run.version_conflict') return;
        options.onError?.(failure, { activity: 'polling a task', runId: run.driver.runId });
      }),
    childEnded: (child) => children.ended(child),
    waitsOnChild: (parent) => children.check(parent),
    runEnded: (run) => {
      children.parentEnded(run);
      // Work its calls started elsewhere (an MCP task) is cancelled with the run.
      cancelCutOffHandles(env, run, (failure) =>
        options.onError?.(failure, { activity: 'cancel_handle', runId: run.driver.runId }),
      );
    },
    childLoaded: (child) => children.checkOrphan(child),
  });
  const children = createChildRuns({
    store,
    env,
    registry,
    owner: base.owner,
    definition,
    leaseMs: base.leaseMs,
    defaults: options.defaults,
    onError: (error, parentRunId) =>
      options.onError?.(toFailure(error), { activity: "handing a child run's end to its parent", runId: parentRunId }),
  });
  return { env, registry, tracer, children };
}

/** A runtime's schedules, wired to the runtime that starts their runs (`runtime`, bound late). */
export function wireSchedules(
  options: RuntimeOptions,
  base: { store: Store; agent: { name: string; set: string }; assertOpen(): void },
  runtime: () => { start(request: StartRequest): Promise<Run>; get(runId: string): Promise<Run> },
): Scheduling {
  return createScheduling({
    store: base.store,
    agent: base.agent.name,
    agents: base.agent.set,
    assertOpen: base.assertOpen,
    start: (request) => runtime().start(request),
    getRun: (runId) =>
      runtime()
        .get(runId)
        .catch(() => null),
    onError: (failure, where) => options.onError?.(failure, where),
  });
}
