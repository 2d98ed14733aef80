/**
 * Machine variants: an embedder's own version of the run machine. A variant keeps what the
 * runtime relies on — the six public states as the top level, the actors the runtime supplies
 * (`planner`, `executor`, `deadline`) where Baton's machine invokes them, the events the runtime
 * sends in each state, and the context fields it reads — and may add nested states, guards,
 * actions, context and events of its own. It has a name and a version, stored with every
 * snapshot, so a snapshot of one variant is never restored into another.
 */
import { assign, createMachine, getInitialSnapshot, type AnyStateMachine } from 'xstate';
import { MACHINE_VERSION, runMachine } from './run-machine.js';
import {
  RUN_STATUSES,
  TERMINAL_STATUSES,
  type MachineLimits,
  type RunContext,
  type RunEvent,
  type RunStatus,
} from './types.js';
import { upgradeSnapshot } from './upgrade-snapshot.js';

/** A run machine with the name and version its snapshots are stored under. */
export interface RunMachineDefinition {
  /** Names the machine; runs made with one name are never driven by another (`[a-z][a-z0-9_.-]*`). */
  name: string;
  /** Bump it when a stored snapshot would no longer restore; give `upgrade` to bring old ones up. */
  version: number;
  machine: AnyStateMachine;
  /** Brings a snapshot stored by an older version of this machine up to `version`. */
  upgrade?: ((snapshot: unknown, fromVersion: number) => unknown) | undefined;
}

/** The name Baton's own machine is stored under. */
export const BATON_MACHINE_NAME = 'baton.run';

/** Baton's own run machine, as a definition. */
export const batonRunMachine: RunMachineDefinition = {
  name: BATON_MACHINE_NAME,
  version: MACHINE_VERSION,
  machine: runMachine,
  upgrade: upgradeSnapshot,
};

/** Declares a variant made some other way (e.g. `runMachine.provide({ guards })`). */
export function defineRunMachine(definition: RunMachineDefinition): RunMachineDefinition {
  return { ...definition };
}

/** The runtime's actors, by the state (or the root, `''`) that must invoke them. */
export const REQUIRED_ACTORS: Readonly<Record<string, string>> = {
  '': 'deadline',
  planning: 'planner',
  executing: 'executor',
};

/** The events the runtime sends to a run in each state: a variant must take them there. */
export const REQUIRED_EVENTS: Readonly<Record<RunStatus, readonly RunEvent['type'][]>> = {
  pending: ['start'],
  planning: ['plan_ready', 'plan_error', 'budget_exceeded', 'cancel', 'timeout'],
  executing: ['next_step', 'done', 'need_approval', 'exec_error', 'budget_exceeded', 'cancel', 'timeout'],
  waiting_human: ['approved', 'rejected', 'cancel', 'timeout'],
  succeeded: [],
  failed: [],
};

/** The context fields of Baton's machine, which the runtime reads: a variant keeps them all. */
export const RUN_CONTEXT_KEYS = [
  'runId',
  'stepIndex',
  'llmCalls',
  'toolCalls',
  'tokens',
  'costUsd',
  'limits',
  'deadlineAt',
  'pendingApprovalId',
  'waitReason',
  'loopSignature',
  'loopCount',
  'stopReason',
  'failure',
] as const satisfies readonly (keyof RunContext)[];

const NAME = /^[a-z][a-z0-9_.-]{0,63}$/;

interface NodeLike {
  type: string;
  states: Record<string, NodeLike>;
  invoke: { src: unknown }[];
  events: string[];
  config: { initial?: unknown };
}

const CHECK_LIMITS: MachineLimits = {
  maxSteps: 1,
  maxLlmCalls: null,
  maxToolCalls: null,
  maxTokens: null,
  maxCostUsd: null,
  loopThreshold: 1,
};

/** True for an XState machine itself (it has a root state node and no `machine` of its own). */
function isStateMachine(value: unknown): value is AnyStateMachine {
  return typeof value === 'object' && value !== null && 'root' in value && !('machine' in value);
}

/**
 * What keeps a machine from being driven by the runtime, one sentence each; empty when it can
 * be. Pure: the machine is only read (its initial context is computed, no actor starts).
 */
export function checkRunMachine(definition: RunMachineDefinition): string[] {
  const problems: string[] = [];
  // An XState machine passed as it is has neither the name nor the version its snapshots are
  // stored under: say what is expected, rather than "name 'undefined' is not a lowercase name".
  if (isStateMachine(definition)) {
    return [
      `it is an XState machine${typeof definition.id === 'string' ? ` ('${definition.id}')` : ''}, not a run machine ` +
        'definition: pass defineRunMachine({ name, version, machine }) (or extendRunMachine) with a lowercase name ' +
        'and a version stored with every snapshot',
    ];
  }
  if (typeof definition.name !== 'string' || !NAME.test(definition.name)) {
    problems.push(`name '${String(definition.name)}' is not a lowercase name ([a-z][a-z0-9_.-]*, at most 64)`);
  }
  if (!Number.isSafeInteger(definition.version) || definition.version < 1) {
    problems.push(`version ${String(definition.version)} is not a positive integer`);
  }
  const machine = definition.machine as AnyStateMachine | undefined;
  if (!machine || typeof machine !== 'object' || !('root' in machine)) {
    problems.push('machine is not an XState machine');
    return problems;
  }
  const root = machine.root as unknown as NodeLike;
  const states = root.states;
  for (const status of RUN_STATUSES) {
    if (!states[status]) problems.push(`state '${status}' is missing`);
  }
  for (const key of Object.keys(states)) {
    if (!(RUN_STATUSES as readonly string[]).includes(key)) {
      problems.push(`top-level state '${key}' is not one of the six public states (nest it inside one)`);
    }
  }
  if (root.config.initial !== 'pending')
    problems.push(`the initial state is '${String(root.config.initial)}', not 'pending'`);
  for (const status of TERMINAL_STATUSES) {
    const node = states[status];
    if (node && node.type !== 'final') problems.push(`state '${status}' is not final`);
  }
  for (const [path, actor] of Object.entries(REQUIRED_ACTORS)) {
    const node = path === '' ? root : states[path];
    if (!node) continue;
    if (!node.invoke.some((invoke) => invoke.src === actor)) {
      problems.push(`${path === '' ? 'the root' : `state '${path}'`} does not invoke the '${actor}' actor`);
    }
  }
  for (const status of RUN_STATUSES) {
    const node = states[status];
    if (!node) continue;
    const taken = new Set(node.events);
    const missing = REQUIRED_EVENTS[status].filter((event) => !taken.has(event));
    if (missing.length > 0) problems.push(`state '${status}' does not take ${missing.map((e) => `'${e}'`).join(', ')}`);
  }
  if (problems.length > 0) return problems;
  try {
    const initial = getInitialSnapshot(machine, { runId: 'check', limits: CHECK_LIMITS, deadlineAt: null }) as {
      context: Record<string, unknown>;
    };
    const missing = RUN_CONTEXT_KEYS.filter((key) => !(key in initial.context));
    if (missing.length > 0) problems.push(`the context lacks ${missing.join(', ')}`);
  } catch (error) {
    problems.push(`its initial state cannot be computed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return problems;
}

/** Baton's machine's states, as a variant's `states` function receives them to change. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type StateConfigs = Record<string, any>;

/** A guard or action of a variant: it sees the run's context (with the variant's own fields) and the event. */
export type VariantGuard = (args: { context: RunContext & Record<string, unknown>; event: RunEvent }) => boolean;

/** How a variant changes Baton's machine. */
export interface VariantSpec {
  name: string;
  version: number;
  /** Extra context fields, with their initial values (JSON only: they are persisted). */
  context?: Record<string, unknown>;
  guards?: Record<string, VariantGuard>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  actions?: Record<string, any>;
  /** Receives Baton's states and returns the variant's; keep the six, change what is inside. */
  states: (stock: StateConfigs) => StateConfigs;
  upgrade?: RunMachineDefinition['upgrade'];
}

/**
 * Makes a variant from Baton's own definition: its states, guards (`isPendingApproval`,
 * `isLastStep`, …) and actions (`stop`) stay available by name, the variant adds its own.
 * @example
 * const variant = extendRunMachine({
 *   name: 'acme.run', version: 1,
 *   guards: { isWeekday: () => new Date().getDay() % 6 !== 0 },
 *   states: (stock) => ({ ...stock, executing: { ...stock.executing, on: { ...stock.executing.on,
 *     done: { guard: 'isWeekday', target: 'succeeded' } } } }),
 * });
 */
export function extendRunMachine(spec: VariantSpec): RunMachineDefinition {
  const config = runMachine.config as unknown as {
    context: (args: { input: unknown }) => Record<string, unknown>;
    states: StateConfigs;
  };
  const stockContext = config.context;
  const extra = spec.context ?? {};
  const implementations = runMachine.implementations as unknown as {
    actors: Record<string, unknown>;
    guards: Record<string, unknown>;
    actions: Record<string, unknown>;
    delays: Record<string, unknown>;
  };
  const machine = createMachine(
    {
      ...config,
      context: (args: { input: unknown }) => ({ ...stockContext(args), ...structuredClone(extra) }),
      states: spec.states(config.states),
    } as never,
    {
      actors: implementations.actors,
      guards: { ...implementations.guards, ...spec.guards },
      actions: { ...implementations.actions, ...spec.actions },
      delays: implementations.delays,
    } as never,
  ) as unknown as AnyStateMachine;
  return { name: spec.name, version: spec.version, machine, upgrade: spec.upgrade };
}

type Timers = Record<string, number>;

/**
 * A delay that survives restarts, for a state of a variant; XState's `after` is lost when a
 * snapshot is restored. On entry the instant is stored in the context (`timers[id]`) and the
 * runtime's `timer` actor sends `event` then; a restored snapshot re-arms it from the stored
 * instant (never later, never from the restart). Spread it into a state's config; leaving the
 * state forgets the instant.
 * @example
 * second_approval: { ...durableDelay('second_approval', 24 * 3_600_000, { type: 'review_expired' }), on: { … } }
 */
export function durableDelay(id: string, delayMs: number, event: { type: string }) {
  const key = (context: Record<string, unknown>): Timers => (context.timers ?? {}) as Timers;
  return {
    entry: assign(({ context }: { context: Record<string, unknown> }) => ({
      timers: { ...key(context), [id]: Date.now() + delayMs },
    })),
    invoke: {
      id: `timer.${id}`,
      src: 'timer' as const,
      input: ({ context }: { context: Record<string, unknown> }) => ({ at: key(context)[id] ?? null, event }),
    },
    exit: assign(({ context }: { context: Record<string, unknown> }) => {
      const timers = { ...key(context) };
      delete timers[id];
      return { timers };
    }),
  };
}
