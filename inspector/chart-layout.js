// @ts-check
/**
 * Where the chart puts each state, and which arrows it draws: a fixed hand layout for the six
 * public states (it reads better than any automatic one for so few), and the arrows from the
 * machine's own description (`GET /v1/machine`). A state with no position is an error, so a
 * changed machine is caught by a test instead of drawn wrong.
 */

/** @typedef {import('./types.js').MachineDescription} MachineDescription */

/** Centre of each state's box, in the chart's 760 × 300 view box. */
export const POSITIONS = /** @type {Readonly<Record<string, { x: number, y: number }>>} */ ({
  pending: { x: 75, y: 70 },
  planning: { x: 265, y: 70 },
  executing: { x: 495, y: 70 },
  succeeded: { x: 685, y: 70 },
  failed: { x: 265, y: 240 },
  waiting_human: { x: 495, y: 240 },
});

export const BOX = { width: 130, height: 44 };
export const VIEW_BOX = { width: 760, height: 300 };

/**
 * @typedef {{ from: string, to: string, events: string[], labels: string[], curve: number }} ChartEdge
 * `labels` name each transition with its guard: `rejected [and(isPendingApproval, isLastStep)]`;
 * `curve` bends an arrow when the opposite arrow exists too, so the two do not overlap.
 */

/**
 * The chart of a machine: its top-level states with their positions, and one arrow per pair of
 * states some transition connects.
 * @param {MachineDescription} machine
 * @returns {{ nodes: { name: string, x: number, y: number, final: boolean }[], edges: ChartEdge[] }}
 */
export function layoutChart(machine) {
  const nodes = Object.entries(machine.states).map(([name, state]) => {
    const at = POSITIONS[name];
    if (!at) throw new Error(`The inspector has no position for state '${name}': add it to POSITIONS`);
    return { name, x: at.x, y: at.y, final: state.type === 'final' };
  });
  /** @type {Map<string, ChartEdge>} */
  const byPair = new Map();
  for (const t of machine.transitions) {
    if (t.internal || t.target === null) continue;
    // A nested state (a variant's sub-state) is drawn as its top-level state.
    const from = t.source.split('.')[0] ?? t.source;
    const to = t.target.split('.')[0] ?? t.target;
    if (from === to) continue;
    const key = `${from}>${to}`;
    const edge = byPair.get(key) ?? { from, to, events: [], labels: [], curve: 0 };
    if (!edge.events.includes(t.event)) edge.events.push(t.event);
    edge.labels.push(t.guard ? `${t.event} [${t.guard}]` : t.event);
    byPair.set(key, edge);
  }
  const edges = [...byPair.values()];
  for (const edge of edges) if (byPair.has(`${edge.to}>${edge.from}`)) edge.curve = 1;
  return { nodes, edges };
}

/**
 * The short label of an arrow: its events, or the first ones and how many more (the tooltip
 * lists them all, with their guards).
 * @param {string[]} events
 */
export function edgeLabel(events) {
  const all = events.join(' | ');
  return all.length <= 22 ? all : `${events[0]} +${events.length - 1}`;
}

/**
 * The path of an arrow from the border of one box to the border of the other; a curved arrow
 * bows to its right-hand side, so an opposite pair forms an ellipse.
 * @param {{ x: number, y: number }} a
 * @param {{ x: number, y: number }} b
 * @param {number} curve
 * @returns {{ d: string, labelX: number, labelY: number }}
 */
export function edgePath(a, b, curve) {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length = Math.hypot(dx, dy) || 1;
  const ux = dx / length;
  const uy = dy / length;
  // Leave each box through its border: scale the unit vector until it meets the box's edge.
  const exit = Math.min(BOX.width / 2 / Math.abs(ux || 1e-9), BOX.height / 2 / Math.abs(uy || 1e-9)) + 4;
  const start = { x: a.x + ux * exit, y: a.y + uy * exit };
  const end = { x: b.x - ux * exit, y: b.y - uy * exit };
  const bow = curve * 26;
  const mid = { x: (start.x + end.x) / 2 - uy * bow, y: (start.y + end.y) / 2 + ux * bow };
  const d =
    curve === 0
      ? `M ${start.x.toFixed(1)} ${start.y.toFixed(1)} L ${end.x.toFixed(1)} ${end.y.toFixed(1)}`
      : `M ${start.x.toFixed(1)} ${start.y.toFixed(1)} Q ${mid.x.toFixed(1)} ${mid.y.toFixed(1)} ${end.x.toFixed(1)} ${end.y.toFixed(1)}`;
  // Labels sit a third of the way from the source, off to the side, so crossing arrows keep
  // their labels apart.
  const t = 0.36;
  const point =
    curve === 0
      ? { x: start.x + (end.x - start.x) * t, y: start.y + (end.y - start.y) * t }
      : {
          x: (1 - t) ** 2 * start.x + 2 * (1 - t) * t * mid.x + t ** 2 * end.x,
          y: (1 - t) ** 2 * start.y + 2 * (1 - t) * t * mid.y + t ** 2 * end.y,
        };
  const side = curve === 0 ? 9 : 12;
  const labelAt = { x: point.x - uy * side, y: point.y + ux * side };
  return { d, labelX: labelAt.x, labelY: labelAt.y };
}
