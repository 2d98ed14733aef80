/**
 * The run machine's definition as plain JSON, for inspectors and tools that draw or check it:
 * every state with its invoked actors, and every transition with its event, target, guard
 * (composed guards named part by part) and actions (named, or `assign(keys)`). Nothing in it is
 * a function or a class, so it is the same after `JSON.stringify`.
 */
import type { AnyStateMachine } from 'xstate';
import { describeGuard, guardNames } from './describe-guard.js';
import { MACHINE_VERSION, runMachine } from './run-machine.js';
import { BATON_MACHINE_NAME, type RunMachineDefinition } from './variants.js';

/** One transition: `event` in `source` goes to `target` when `guard` holds (branches in order). */
export interface MachineTransition {
  event: string;
  source: string;
  /** The target state's path (`waiting_human`, or `waiting_human.review` for a nested one); null for none. */
  target: string | null;
  /** Position among the branches of this event in this state: the first whose guard holds is taken. */
  branch: number;
  guard: string | null;
  /** XState's own transitions (an invoked actor's done/error, raised on as the machine's events). */
  internal: boolean;
  /** Every named guard in `guard`, composed ones taken apart. */
  guards: string[];
  actions: string[];
}

/** One state node. */
export interface MachineState {
  /** The state's path from the root, e.g. `executing`. */
  path: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial: string | null;
  /** Sources of the actors invoked while the state is active. */
  invoke: string[];
  /** Child states, in order. */
  states: Record<string, MachineState>;
}

/** What `describeMachine` answers (and `GET /v1/machine` serves). */
export interface MachineDescription {
  id: string;
  /** The name its snapshots are stored under: `baton.run`, or a variant's. */
  name: string;
  version: number;
  initial: string | null;
  /** Actors invoked for the run's whole life (the deadline). */
  invoke: string[];
  states: Record<string, MachineState>;
  /** Every transition of every state, in definition order. */
  transitions: MachineTransition[];
  /** Every event some state takes (XState's internal ones left out). */
  events: string[];
}

interface NodeLike {
  key: string;
  path: string[];
  type: MachineState['type'];
  config: { initial?: unknown };
  states: Record<string, NodeLike>;
  invoke: { src: unknown }[];
  transitions: Map<string, { target?: readonly NodeLike[]; guard?: unknown; actions: readonly unknown[] }[]>;
}

function describeAction(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    const built = action as { type?: unknown; assignment?: unknown };
    if (built.type === 'xstate.assign' && built.assignment && typeof built.assignment === 'object') {
      return `assign(${Object.keys(built.assignment).join(', ')})`;
    }
    if (built.type === 'xstate.assign') return 'assign';
    if (typeof built.type === 'string') return built.type.replace(/^xstate\./, '');
    return action.name ? `inline:${action.name}` : 'inline';
  }
  if (action && typeof action === 'object' && 'type' in action) return String((action as { type: unknown }).type);
  return 'unknown';
}

function sourceOf(invoke: { src: unknown }): string {
  return typeof invoke.src === 'string' ? invoke.src : 'inline';
}

function describeState(node: NodeLike, transitions: MachineTransition[]): MachineState {
  const path = node.path.join('.');
  for (const [event, branches] of node.transitions) {
    branches.forEach((definition, branch) => {
      const guard = describeGuard(definition.guard);
      transitions.push({
        event,
        source: path,
        target: definition.target?.map((t) => t.path.join('.')).join(',') || null,
        branch,
        guard,
        internal: event.startsWith('xstate.'),
        guards: guardNames(guard),
        actions: definition.actions.map(describeAction),
      });
    });
  }
  const states: Record<string, MachineState> = {};
  for (const [key, child] of Object.entries(node.states)) states[key] = describeState(child, transitions);
  return {
    path,
    type: node.type,
    initial: typeof node.config.initial === 'string' ? node.config.initial : null,
    invoke: node.invoke.map(sourceOf),
    states,
  };
}

/**
 * Describes a run machine (Baton's own by default) as plain JSON: a variant's definition (what
 * `extendRunMachine` or `defineRunMachine` returns, as `createRuntime({ machine })` takes it), or
 * an XState machine with its version and name.
 * @example
 * const { transitions } = describeMachine();
 * transitions.filter((t) => t.event === 'rejected').map((t) => t.guard);
 * // ['and(isPendingApproval, isTerminatingRejection)', …, 'isPendingApproval']
 */
export function describeMachine(definition: RunMachineDefinition): MachineDescription;
export function describeMachine(machine?: AnyStateMachine, version?: number, name?: string): MachineDescription;
export function describeMachine(
  given: AnyStateMachine | RunMachineDefinition = runMachine,
  givenVersion?: number,
  givenName?: string,
): MachineDescription {
  const definition = 'machine' in given && typeof given.machine === 'object' && 'root' in given.machine ? given : null;
  const machine = definition ? definition.machine : (given as AnyStateMachine);
  const version = definition ? definition.version : (givenVersion ?? MACHINE_VERSION);
  const name = definition ? definition.name : (givenName ?? BATON_MACHINE_NAME);
  const root = machine.root as unknown as NodeLike;
  const transitions: MachineTransition[] = [];
  const states: Record<string, MachineState> = {};
  for (const [key, child] of Object.entries(root.states)) states[key] = describeState(child, transitions);
  return {
    id: machine.id,
    name,
    version,
    initial: typeof root.config.initial === 'string' ? root.config.initial : null,
    invoke: root.invoke.map(sourceOf),
    states,
    transitions,
    events: [...new Set(transitions.filter((t) => !t.internal).map((t) => t.event))],
  };
}
