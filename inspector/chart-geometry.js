// @ts-check
/**
 * The chart's geometry: each arrow's path from the border of one state's box to the other's, and
 * where each arrow's label goes. A label is placed beside its own arrow (never centred on another),
 * inside the view box, clear of every state, every other label and every other arrow; the first
 * place along the arrow that meets all of that wins. Widths are computed, not measured: labels
 * are set in a monospace font, so a label's width is its length times one character's width.
 */

/** @typedef {{ x: number, y: number }} Point */
/** @typedef {{ x: number, y: number, width: number, height: number }} Box */

export const BOX = { width: 130, height: 44 };

/** Label metrics, in view-box units: one character's advance (11px monospace), a line, padding. */
export const LABEL = { char: 6.8, line: 13, pad: 3 };

/** Where along an arrow (0 = its source) a label may sit, best first: near the middle, then outwards. */
const ALONG = [0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7, 0.25, 0.75, 0.2, 0.8, 0.15, 0.85];
/** How much farther than touching a label may stand off its arrow, nearest first. */
const STAND_OFF = [0, 6, 12];
/** Clear space a label keeps from states, labels and other arrows. */
const CLEAR = { node: 3, label: 2, edge: 4 };

/**
 * An arrow's path: straight, or (with `curve`) bowed to its right-hand side, so an opposite pair
 * forms an ellipse instead of lying on one line.
 * @param {Point} a
 * @param {Point} b
 * @param {number} curve
 * @returns {{ d: string, at: (t: number) => Point, normal: Point, samples: Point[] }}
 */
export function edgeGeometry(a, b, curve) {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length = Math.hypot(dx, dy) || 1;
  const ux = dx / length;
  const uy = dy / length;
  // Leave each box through its border: scale the unit vector until it meets the box's edge.
  const exit = Math.min(BOX.width / 2 / Math.abs(ux || 1e-9), BOX.height / 2 / Math.abs(uy || 1e-9)) + 4;
  const start = { x: a.x + ux * exit, y: a.y + uy * exit };
  const end = { x: b.x - ux * exit, y: b.y - uy * exit };
  const bow = curve * 40;
  const mid = { x: (start.x + end.x) / 2 - uy * bow, y: (start.y + end.y) / 2 + ux * bow };
  const f = (/** @type {number} */ n) => n.toFixed(1);
  const d =
    curve === 0
      ? `M ${f(start.x)} ${f(start.y)} L ${f(end.x)} ${f(end.y)}`
      : `M ${f(start.x)} ${f(start.y)} Q ${f(mid.x)} ${f(mid.y)} ${f(end.x)} ${f(end.y)}`;
  /** @param {number} t */
  const at = (t) =>
    curve === 0
      ? { x: start.x + (end.x - start.x) * t, y: start.y + (end.y - start.y) * t }
      : {
          x: (1 - t) ** 2 * start.x + 2 * (1 - t) * t * mid.x + t ** 2 * end.x,
          y: (1 - t) ** 2 * start.y + 2 * (1 - t) * t * mid.y + t ** 2 * end.y,
        };
  const count = Math.max(2, Math.ceil(Math.hypot(end.x - start.x, end.y - start.y) / 2));
  const samples = Array.from({ length: count + 1 }, (_, i) => at(i / count));
  return { d, at, normal: { x: -uy, y: ux }, samples };
}

/**
 * How far a point is from a box (0 inside it).
 * @param {Point} p
 * @param {Box} box
 */
export function distanceToBox(p, box) {
  const dx = Math.max(box.x - p.x, 0, p.x - (box.x + box.width));
  const dy = Math.max(box.y - p.y, 0, p.y - (box.y + box.height));
  return Math.hypot(dx, dy);
}

/** @param {Box} a @param {Box} b @param {number} gap */
function overlaps(a, b, gap) {
  return (
    a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap
  );
}

/**
 * Places one label box per arrow (in order), beside the arrow at the first free spot.
 * @param {{ view: { width: number, height: number }, nodes: Box[], edges: { samples: Point[], at: (t: number) => Point, normal: Point, size: { width: number, height: number } }[] }} chart
 * @returns {{ box: Box, free: boolean }[]} `free` is false when no spot met every rule (the least bad one is used)
 */
export function placeLabels(chart) {
  /** @type {Box[]} */
  const placed = [];
  return chart.edges.map((edge, index) => {
    const { width, height } = edge.size;
    // How far the box's centre must move along the normal for its side to clear the arrow.
    const side = (Math.abs(edge.normal.x) * width) / 2 + (Math.abs(edge.normal.y) * height) / 2 + 2;
    /** @type {{ box: Box, faults: number } | undefined} */
    let best;
    for (const t of ALONG) {
      for (const offset of STAND_OFF.flatMap((more) => [side + more, -side - more])) {
        const p = edge.at(t);
        const cx = p.x + edge.normal.x * offset;
        const cy = p.y + edge.normal.y * offset;
        const box = { x: cx - width / 2, y: cy - height / 2, width, height };
        const faults = faultsOf(box, chart, index, placed);
        if (!best || faults < best.faults) best = { box, faults };
        if (faults === 0) break;
      }
      if (best?.faults === 0) break;
    }
    const chosen = /** @type {{ box: Box, faults: number }} */ (best);
    placed.push(chosen.box);
    return { box: chosen.box, free: chosen.faults === 0 };
  });
}

/**
 * How many rules a label box breaks where it stands.
 * @param {Box} box
 * @param {Parameters<typeof placeLabels>[0]} chart
 * @param {number} own the index of the box's own arrow
 * @param {Box[]} placed
 */
function faultsOf(box, chart, own, placed) {
  let faults = 0;
  if (box.x < 1 || box.y < 1 || box.x + box.width > chart.view.width - 1 || box.y + box.height > chart.view.height - 1)
    faults += 1;
  for (const node of chart.nodes) if (overlaps(box, node, CLEAR.node)) faults += 1;
  for (const other of placed) if (overlaps(box, other, CLEAR.label)) faults += 1;
  chart.edges.forEach((edge, index) => {
    if (index !== own && edge.samples.some((p) => distanceToBox(p, box) < CLEAR.edge)) faults += 1;
  });
  return faults;
}
