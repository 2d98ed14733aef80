/**
 * The transition model of a machine, read from its definition: every (state, event, guard
 * branch) it takes, and a set of event paths from the initial state that covers each one.
 * Traversal uses XState's pure transitions, so no actor is ever started.
 */
import { getAdjacencyMap, getStateNodes, serializeEvent } from '@xstate/graph';
import type { AnyStateMachine, EventObject, Snapshot } from 'xstate';
import { describeGuard } from '../../machines/describe-guard.js';

/** One legal transition: a state, an event, and which of its guarded branches. */
export interface TransitionEdge {
  /** `state --event[branch]--> target`, stable for reports. */
  id: string;
  source: string;
  event: string;
  branch: number;
  guard: string | null;
  target: string | null;
}

/** One step of a path: the event taken and the snapshot it led to. */
export interface PathStep<TSnapshot, TEvent> {
  event: TEvent;
  /** The transition this step takes. */
  edge: TransitionEdge;
  before: TSnapshot;
  after: TSnapshot;
}

/** A path from the initial state: the steps, in order. */
export interface ModelPath<TSnapshot, TEvent> {
  steps: PathStep<TSnapshot, TEvent>[];
}

/** Every transition a machine takes for the given event types, straight from its definition. */
export function listTransitions(machine: AnyStateMachine, eventTypes: readonly string[]): TransitionEdge[] {
  const wanted = new Set(eventTypes);
  const edges: TransitionEdge[] = [];
  for (const node of getStateNodes(machine.root)) {
    for (const [event, definitions] of node.transitions) {
      if (!wanted.has(event)) continue;
      definitions.forEach((definition, branch) => {
        const guard = describeGuard(definition.guard);
        const target = definition.target?.map((t) => t.key).join(',') ?? null;
        edges.push({
          id: `${node.key} --${event}[${guard ?? 'always'}]--> ${target ?? '(self)'}`,
          source: node.key,
          event,
          branch,
          guard,
          target,
        });
      });
    }
  }
  return edges;
}

/** How to explore a machine: which events to try in each state, and what makes two states the same. */
export interface ExploreOptions<TSnapshot, TEvent> {
  /** The machine's input (one initial state). */
  input?: unknown;
  /**
   * Several inputs, each explored from its own initial state (e.g. the same limits with another
   * policy): the paths of all cover the edges together. Takes the place of `input`.
   */
  inputs?: readonly unknown[];
  events: (snapshot: TSnapshot) => readonly TEvent[];
  serialize: (snapshot: TSnapshot) => string;
}

type MachineSnapshotLike = Snapshot<unknown> & { value: unknown };

/** The edge a snapshot takes for an event, found by the identity of the selected transition. */
export function edgeOf(
  machine: AnyStateMachine,
  edges: readonly TransitionEdge[],
  snapshot: MachineSnapshotLike,
  event: EventObject,
): TransitionEdge | undefined {
  const selected = machine.getTransitionData(snapshot as never, event)[0];
  if (!selected) return undefined;
  for (const node of getStateNodes(machine.root)) {
    const branch = node.transitions.get(event.type)?.indexOf(selected) ?? -1;
    if (branch >= 0) return edges.find((e) => e.source === node.key && e.event === event.type && e.branch === branch);
  }
  return undefined;
}

/**
 * Generates paths that together take every reachable edge: for each edge, the shortest path
 * to a state that takes it, plus that edge (from whichever input reaches it soonest, the first
 * on a tie); then drops paths whose edges others already cover. Shortest paths to states alone
 * would miss edges between states already reached.
 */
export function coverTransitions<TSnapshot extends MachineSnapshotLike, TEvent extends EventObject>(
  machine: AnyStateMachine,
  edges: readonly TransitionEdge[],
  options: ExploreOptions<TSnapshot, TEvent>,
): { paths: ModelPath<TSnapshot, TEvent>[]; covered: Set<string>; uncovered: TransitionEdge[] } {
  const shortestToEdge = new Map<string, PathStep<TSnapshot, TEvent>[]>();
  for (const input of options.inputs ?? [options.input]) {
    for (const [id, path] of shortestPathsToEdges(machine, edges, options, input)) {
      const known = shortestToEdge.get(id);
      if (!known || path.length < known.length) shortestToEdge.set(id, path);
    }
  }
  // Longest first, keep a path only if it takes an edge no kept path takes.
  const candidates = [...shortestToEdge.values()].sort((a, b) => b.length - a.length);
  const covered = new Set<string>();
  const paths: ModelPath<TSnapshot, TEvent>[] = [];
  for (const steps of candidates) {
    if (steps.every((step) => covered.has(step.edge.id))) continue;
    for (const step of steps) covered.add(step.edge.id);
    paths.push({ steps });
  }
  return { paths, covered, uncovered: edges.filter((e) => !covered.has(e.id)) };
}

/** Breadth-first from the initial state of one input: the shortest path that takes each edge. */
function shortestPathsToEdges<TSnapshot extends MachineSnapshotLike, TEvent extends EventObject>(
  machine: AnyStateMachine,
  edges: readonly TransitionEdge[],
  options: ExploreOptions<TSnapshot, TEvent>,
  input: unknown,
): Map<string, PathStep<TSnapshot, TEvent>[]> {
  const adjacency = getAdjacencyMap(machine, {
    input,
    events: options.events as never,
    serializeState: (snapshot) => options.serialize(snapshot as unknown as TSnapshot),
    serializeEvent: (event) => serializeEvent(event),
  });
  const initialKey = Object.keys(adjacency)[0]!;
  const reachedBy = new Map<string, PathStep<TSnapshot, TEvent>[]>([[initialKey, []]]);
  const queue = [initialKey];
  const shortestToEdge = new Map<string, PathStep<TSnapshot, TEvent>[]>();
  while (queue.length > 0) {
    const key = queue.shift()!;
    const node = adjacency[key as keyof typeof adjacency]!;
    const prefix = reachedBy.get(key)!;
    for (const { event, state } of Object.values(node.transitions)) {
      const before = node.state as unknown as TSnapshot;
      const edge = edgeOf(machine, edges, before, event);
      if (!edge) continue;
      const path = [...prefix, { event: event as TEvent, edge, before, after: state as unknown as TSnapshot }];
      if (!shortestToEdge.has(edge.id)) shortestToEdge.set(edge.id, path);
      const nextKey = options.serialize(state as unknown as TSnapshot);
      if (!reachedBy.has(nextKey) && adjacency[nextKey as keyof typeof adjacency]) {
        reachedBy.set(nextKey, path);
        queue.push(nextKey);
      }
    }
  }
  return shortestToEdge;
}
