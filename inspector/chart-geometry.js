// @ts-check
/**
 * The chart's geometry: each arrow's path from the border of one state's box to the other's, and
 * where each arrow's label goes. A label is placed beside its own arrow (never centred on another,
 * nearer its own than any other), inside the view box, clear of every state, every other label and
 * every other arrow; a search picks one such place per label (the nearest its arrow, then its
 * arrow's middle, first) so that no two labels meet. Widths are computed, not measured: labels
 * are set in a monospace font, so a label's width is its length times one character's width.
 */

/** @typedef {{ x: number, y: number }} Point */
/** @typedef {{ x: number, y: number, width: number, height: number }} Box */

export const BOX = { width: 130, height: 44 };

/** Label metrics, in view-box units: one character's advance (11px monospace), a line, padding. */
export const LABEL = { char: 6.8, line: 13, pad: 3 };

/** Where along an arrow (0 = its source) a label may sit, best first: the middle, then outwards. */
const ALONG = [0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7, 0.25, 0.75, 0.2, 0.8, 0.15, 0.85, 0.1, 0.9];
/** How much farther than touching a label may stand off its arrow, nearest first. */
const STAND_OFF = [0, 4, 8];
/**
 * Clear space a label keeps from states, labels and other arrows; `own` is the farthest its own
 * arrow may be (so it reads as that arrow's), `nearer` how much nearer its own arrow is than any other.
 */
const CLEAR = { node: 3, label: 2, edge: 4, own: 12, nearer: 5 };
/** How many partial placements the search tries before it settles for the least bad one. */
const SEARCH_LIMIT = 200_000;

/** How far each of two opposite arrows runs from the line between their states' centres. */
const SPREAD = 8;

/**
 * An arrow's path: a straight line from border to border, moved `side` × SPREAD to its
 * right-hand side, so an opposite pair (each with side 1) runs side by side instead of lying on
 * one line, and each pair's labels stand outside it.
 * @param {Point} a
 * @param {Point} b
 * @param {number} side
 * @returns {{ d: string, at: (t: number) => Point, normal: Point, samples: Point[], ends: [Point, Point] }}
 */
export function edgeGeometry(a, b, side) {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length = Math.hypot(dx, dy) || 1;
  const u = { x: dx / length, y: dy / length };
  const normal = { x: -u.y, y: u.x };
  const shift = { x: normal.x * side * SPREAD, y: normal.y * side * SPREAD };
  // Leave each box through its border (and 4 beyond): how far along the line, from a point
  // `shift` off the box's centre, its border is.
  /** @param {Point} along */
  const exit = (along) =>
    Math.min(
      (BOX.width / 2 - Math.sign(along.x) * shift.x) / Math.abs(along.x || 1e-9),
      (BOX.height / 2 - Math.sign(along.y) * shift.y) / Math.abs(along.y || 1e-9),
    ) + 4;
  const out = exit(u);
  const back = exit({ x: -u.x, y: -u.y });
  const start = { x: a.x + shift.x + u.x * out, y: a.y + shift.y + u.y * out };
  const end = { x: b.x + shift.x - u.x * back, y: b.y + shift.y - u.y * back };
  const f = (/** @type {number} */ n) => n.toFixed(1);
  const d = `M ${f(start.x)} ${f(start.y)} L ${f(end.x)} ${f(end.y)}`;
  /** @param {number} t */
  const at = (t) => ({ x: start.x + (end.x - start.x) * t, y: start.y + (end.y - start.y) * t });
  const count = Math.max(2, Math.ceil(Math.hypot(end.x - start.x, end.y - start.y) / 2));
  const samples = Array.from({ length: count + 1 }, (_, i) => at(i / count));
  return { d, at, normal, samples, ends: /** @type {[Point, Point]} */ ([start, end]) };
}

/**
 * How far a straight arrow is from a box: 0 if it touches or crosses it, else the nearest of its
 * ends to the box and of the box's corners to it.
 * @param {[Point, Point]} ends
 * @param {Box} box
 */
export function segmentToBox([a, b], box) {
  const [left, top, right, bottom] = [box.x, box.y, box.x + box.width, box.y + box.height];
  const ends = Math.min(distanceToBox(a, box), distanceToBox(b, box));
  if (ends === 0) return 0;
  let nearest = ends;
  for (const [x, y] of [
    [left, top],
    [right, top],
    [right, bottom],
    [left, bottom],
  ]) {
    nearest = Math.min(nearest, toSegment(/** @type {number} */ (x), /** @type {number} */ (y), a, b));
  }
  if (nearest === 0) return 0;
  // Neither end in the box, no corner on the arrow: it meets the box only by passing through it,
  // and then it crosses one of the box's diagonals.
  const crossesDiagonal = (
    /** @type {number} */ x1,
    /** @type {number} */ y1,
    /** @type {number} */ x2,
    /** @type {number} */ y2,
  ) =>
    turn(a.x, a.y, b.x, b.y, x1, y1) * turn(a.x, a.y, b.x, b.y, x2, y2) <= 0 &&
    turn(x1, y1, x2, y2, a.x, a.y) * turn(x1, y1, x2, y2, b.x, b.y) <= 0;
  return crossesDiagonal(left, top, right, bottom) || crossesDiagonal(right, top, left, bottom) ? 0 : nearest;
}

/**
 * How far a point is from a segment.
 * @param {number} x @param {number} y @param {Point} a @param {Point} b
 */
function toSegment(x, y, a, b) {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const t = Math.max(0, Math.min(1, ((x - a.x) * dx + (y - a.y) * dy) / (dx * dx + dy * dy || 1)));
  return Math.hypot(x - (a.x + t * dx), y - (a.y + t * dy));
}

/**
 * Which side of the line through (x1, y1) and (x2, y2) the point (x, y) is on (0 on it).
 * @param {number} x1 @param {number} y1 @param {number} x2 @param {number} y2
 * @param {number} x @param {number} y
 */
function turn(x1, y1, x2, y2, x, y) {
  return Math.sign((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1));
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
 * @typedef {{
 *   ends: [Point, Point], at: (t: number) => Point, normal: Point,
 *   size: { width: number, height: number }, text: number,
 * }} LabelledEdge
 * `size` is the label's box (its text and the count line under or over it), `text` the width of
 * its text.
 * @typedef {{ box: Box, line: Box }} Spot `line` is where the label's text goes in `box`: the
 * half nearer the arrow.
 */

/**
 * Places one label box per arrow (in order), each beside its own arrow. Every arrow has its
 * spots that meet the rules against the view, the states and the arrows (best first: nearest
 * the arrow, then nearest its middle); a search then picks one spot per arrow so that no two
 * labels meet, trying the arrows with the fewest spots first and each arrow's spots in order.
 * @param {{ view: { width: number, height: number }, nodes: Box[], edges: LabelledEdge[] }} chart
 * @returns {(Spot & { free: boolean })[]} `free` is false when no spot met every rule (the least bad one is used)
 */
export function placeLabels(chart) {
  const spots = chart.edges.map((_, index) => spotsOf(chart, index));
  const chosen = searchSpots(spots.map((s) => s.free));
  if (chosen) return chosen.map((spot) => ({ ...spot, free: true }));
  // No combination meets every rule: each label in turn takes its least bad spot.
  /** @type {Box[]} */
  const placed = [];
  return spots.map(({ all }) => {
    /** @type {{ spot: Spot, faults: number } | undefined} */
    let best;
    for (const spot of all) {
      const faults = spot.faults + placed.filter((other) => overlaps(spot.box, other, CLEAR.label)).length;
      if (!best || faults < best.faults) best = { spot, faults };
    }
    const { spot, faults } = /** @type {{ spot: Spot, faults: number }} */ (best);
    placed.push(spot.box);
    return { box: spot.box, line: spot.line, free: faults === 0 };
  });
}

/**
 * Every spot beside one arrow, best first, with how many rules each breaks on its own (labels
 * aside); `free` are those that break none.
 * @param {Parameters<typeof placeLabels>[0]} chart
 * @param {number} index
 */
function spotsOf(chart, index) {
  const edge = /** @type {LabelledEdge} */ (chart.edges[index]);
  const { width, height } = edge.size;
  // How far the box's centre must move along the normal for its side to clear the arrow.
  const side = (Math.abs(edge.normal.x) * width) / 2 + (Math.abs(edge.normal.y) * height) / 2 + 2;
  /** @type {(Spot & { faults: number })[]} */
  const all = [];
  for (const more of STAND_OFF) {
    for (const t of ALONG) {
      for (const offset of [side + more, -side - more]) {
        const p = edge.at(t);
        const cx = p.x + edge.normal.x * offset;
        const cy = p.y + edge.normal.y * offset;
        const box = { x: cx - width / 2, y: cy - height / 2, width, height };
        const spot = { box, line: nearerLine(box, edge) };
        all.push({ ...spot, faults: faultsOf(spot, chart, index) });
      }
    }
  }
  return { all, free: all.filter((s) => s.faults === 0) };
}

/**
 * The half of a label's box its text goes in: the line nearer its arrow (the count takes the
 * other).
 * @param {Box} box
 * @param {LabelledEdge} edge
 */
function nearerLine(box, edge) {
  const x = box.x + box.width / 2 - edge.text / 2;
  const top = { x, y: box.y + LABEL.pad, width: edge.text, height: LABEL.line };
  const bottom = { ...top, y: top.y + LABEL.line };
  const near = (/** @type {Box} */ line) => segmentToBox(edge.ends, line);
  return near(bottom) < near(top) ? bottom : top;
}

/**
 * One free spot per arrow with no two labels meeting, or undefined if the search finds none.
 * @param {Spot[][]} free each arrow's free spots, best first
 * @returns {Spot[] | undefined}
 */
function searchSpots(free) {
  const order = free.map((_, i) => i).sort((a, b) => (free[a]?.length ?? 0) - (free[b]?.length ?? 0) || a - b);
  /** @type {Spot[]} */
  const chosen = [];
  /** @type {Box[]} */
  const placed = [];
  let tries = 0;
  /** @param {number} depth @returns {boolean} */
  const place = (depth) => {
    if (depth === order.length) return true;
    const index = /** @type {number} */ (order[depth]);
    for (const spot of free[index] ?? []) {
      tries += 1;
      if (tries > SEARCH_LIMIT) return false;
      if (placed.some((other) => overlaps(spot.box, other, CLEAR.label))) continue;
      chosen[index] = spot;
      placed.push(spot.box);
      if (place(depth + 1)) return true;
      placed.pop();
    }
    return false;
  };
  return place(0) ? chosen : undefined;
}

/**
 * How many rules a label breaks where it stands, labels aside: its box must be inside the view
 * and clear of every state and of every other arrow; it must be beside its own arrow (its text
 * near it, neither crossed by it) and nearer its own arrow than any other, both with the count
 * line drawn and without.
 * @param {Spot} spot
 * @param {Parameters<typeof placeLabels>[0]} chart
 * @param {number} own the index of the label's own arrow
 */
function faultsOf({ box, line }, chart, own) {
  let faults = 0;
  if (box.x < 1 || box.y < 1 || box.x + box.width > chart.view.width - 1 || box.y + box.height > chart.view.height - 1)
    faults += 1;
  for (const node of chart.nodes) if (overlaps(box, node, CLEAR.node)) faults += 1;
  /** @param {Box} area */
  const distances = (area) => chart.edges.map((edge) => segmentToBox(edge.ends, area));
  const [toBox, toLine] = [distances(box), distances(line)];
  const [ownBox, ownLine] = [/** @type {number} */ (toBox[own]), /** @type {number} */ (toLine[own])];
  if (ownBox < 1 || ownLine > CLEAR.own) faults += 1;
  toBox.forEach((distance, index) => {
    if (index === own) return;
    if (distance < CLEAR.edge || distance < ownBox + CLEAR.nearer) faults += 1;
    else if (/** @type {number} */ (toLine[index]) < ownLine + CLEAR.nearer) faults += 1;
  });
  return faults;
}
