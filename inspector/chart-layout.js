// @ts-check
/**
 * Where the chart puts each state, and which arrows it draws: a fixed hand layout for the six
 * public states (it reads better than any automatic one for so few), and the arrows from the
 * machine's own description (`GET /v1/machine`). A state with no position is an error, so a
 * changed machine is caught by a test instead of drawn wrong.
 */
import { BOX, LABEL, edgeGeometry, placeLabels } from './chart-geometry.js';

export { BOX };

/** @typedef {import('./types.js').MachineDescription} MachineDescription */
/** @typedef {import('./chart-geometry.js').Box} Box */

/** Centre of each state's box, in the chart's view box. */
export const POSITIONS = /** @type {Readonly<Record<string, { x: number, y: number }>>} */ ({
  pending: { x: 75, y: 56 },
  planning: { x: 295, y: 56 },
  executing: { x: 605, y: 56 },
  succeeded: { x: 825, y: 56 },
  failed: { x: 235, y: 314 },
  waiting_human: { x: 665, y: 314 },
});

export const VIEW_BOX = { width: 900, height: 370 };

/** The widest count line a label keeps room for. */
const COUNT_ROOM = 'taken 999×'.length;

/**
 * @typedef {{
 *   from: string, to: string, events: string[], labels: string[], side: number,
 *   d: string, label: string, box: Box, line: Box, free: boolean,
 * }} ChartEdge
 * `events` come in the order the label names them (see `layoutChart`); `labels` name each
 * transition with its guard: `rejected [and(isPendingApproval, isLastStep)]`; `side` is 1
 * when the opposite arrow exists too (the two run side by side), else 0; `box` is where the
 * label goes (its text and the count line), `line` where in it its text goes (the half nearer
 * the arrow), `free` false if no spot met every placement rule.
 */

/**
 * The chart of a machine: its top-level states with their positions, and one arrow per pair of
 * states some transition connects. An arrow's label names first the events that take it by
 * default (an event's only or last-resort branch from its state), then those that take it only
 * on a guard while their usual arrow is another: `waiting_human → executing` is "approved"
 * first, not "cancel" (a cancel goes there only to undo calls; it usually goes to `failed`).
 * @param {MachineDescription} machine
 * @returns {{ nodes: { name: string, x: number, y: number, final: boolean }[], edges: ChartEdge[] }}
 */
export function layoutChart(machine) {
  const nodes = Object.entries(machine.states).map(([name, state]) => {
    const at = POSITIONS[name];
    if (!at) throw new Error(`The inspector has no position for state '${name}': add it to POSITIONS`);
    return { name, x: at.x, y: at.y, final: state.type === 'final' };
  });
  const transitions = machine.transitions.filter((t) => !t.internal && t.target !== null);
  // The last branch of an event from a state is the one taken when no guard before it holds.
  /** @type {Map<string, number>} */
  const lastBranch = new Map();
  for (const t of transitions) {
    const key = `${t.source}:${t.event}`;
    lastBranch.set(key, Math.max(lastBranch.get(key) ?? 0, t.branch));
  }
  /** @type {Map<string, { from: string, to: string, usual: string[], guarded: string[], labels: string[] }>} */
  const byPair = new Map();
  for (const t of transitions) {
    // A nested state (a variant's sub-state) is drawn as its top-level state.
    const from = t.source.split('.')[0] ?? t.source;
    const target = t.target ?? t.source;
    const to = target.split('.')[0] ?? target;
    if (from === to) continue;
    const key = `${from}>${to}`;
    const pair = byPair.get(key) ?? { from, to, usual: [], guarded: [], labels: [] };
    const usual = t.branch === lastBranch.get(`${t.source}:${t.event}`);
    if (usual && !pair.usual.includes(t.event)) pair.usual.push(t.event);
    else if (!usual && !pair.guarded.includes(t.event)) pair.guarded.push(t.event);
    pair.labels.push(t.guard ? `${t.event} [${t.guard}]` : t.event);
    byPair.set(key, pair);
  }
  const pairs = [...byPair.values()].map((p) => ({
    from: p.from,
    to: p.to,
    labels: p.labels,
    events: [...p.usual, ...p.guarded.filter((e) => !p.usual.includes(e))],
    side: byPair.has(`${p.to}>${p.from}`) ? 1 : 0,
  }));
  const at = new Map(nodes.map((n) => [n.name, n]));
  const geometry = pairs.map((p) => {
    const a = /** @type {{ x: number, y: number }} */ (at.get(p.from) ?? POSITIONS[p.from]);
    const b = /** @type {{ x: number, y: number }} */ (at.get(p.to) ?? POSITIONS[p.to]);
    const label = edgeLabel(p.events);
    const width = LABEL.char * Math.max(label.length, COUNT_ROOM) + 2 * LABEL.pad;
    const size = { width, height: 2 * LABEL.line + 2 * LABEL.pad };
    return { label, ...edgeGeometry(a, b, p.side), size, text: LABEL.char * label.length };
  });
  const boxes = placeLabels({
    view: VIEW_BOX,
    nodes: nodes.map((n) => ({ x: n.x - BOX.width / 2, y: n.y - BOX.height / 2, ...BOX })),
    edges: geometry,
  });
  const edges = pairs.map((p, i) => {
    const g = /** @type {(typeof geometry)[number]} */ (geometry[i]);
    const placed = /** @type {(typeof boxes)[number]} */ (boxes[i]);
    return { ...p, d: g.d, label: g.label, box: placed.box, line: placed.line, free: placed.free };
  });
  return { nodes, edges };
}

/**
 * The short label of an arrow: its events if they fit, else the first and how many more
 * (`approved +7`; the tooltip lists them all, with their guards).
 * @param {string[]} events in the order `layoutChart` gives them
 */
export function edgeLabel(events) {
  const MAX = 19;
  const all = events.join(' | ');
  return all.length <= MAX || events.length < 2 ? all : `${events[0]} +${events.length - 1}`;
}
