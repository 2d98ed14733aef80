// @ts-check
/**
 * The state chart: the machine's states and arrows (from its description), with a run's current
 * state lit, the states it visited marked, and each arrow it took labelled with how many times.
 */
import { BOX, VIEW_BOX, edgeLabel, edgePath, layoutChart } from './chart-layout.js';
import { s } from './dom.js';

/** @typedef {import('./types.js').FoldState} FoldState */

/**
 * Draws the chart once; `update` lights it for a state of the run.
 * @param {import('./types.js').MachineDescription} machine
 * @returns {{ element: SVGElement, update: (state: FoldState) => void }}
 */
export function createChart(machine) {
  const { nodes, edges } = layoutChart(machine);
  const at = new Map(nodes.map((n) => [n.name, n]));
  const defs = s(
    'defs',
    {},
    s(
      'marker',
      { id: 'arrow', viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto' },
      s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow-head' }),
    ),
    s(
      'marker',
      {
        id: 'arrow-taken',
        viewBox: '0 0 10 10',
        refX: '9',
        refY: '5',
        markerWidth: '7',
        markerHeight: '7',
        orient: 'auto',
      },
      s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow-head taken' }),
    ),
  );
  /** @type {Map<string, { group: SVGElement, path: SVGElement, count: SVGElement }>} */
  const edgeViews = new Map();
  const edgeLayer = s('g', { class: 'edges' });
  for (const edge of edges) {
    const a = at.get(edge.from);
    const b = at.get(edge.to);
    if (!a || !b) continue;
    const { d, labelX, labelY } = edgePath(a, b, edge.curve);
    const path = s('path', { d, class: 'edge', 'marker-end': 'url(#arrow)' });
    const label = s(
      'text',
      { x: labelX.toFixed(1), y: labelY.toFixed(1), class: 'edge-label' },
      edgeLabel(edge.events),
    );
    const count = s('text', { x: labelX.toFixed(1), y: (labelY + 13).toFixed(1), class: 'edge-count' });
    const group = s(
      'g',
      { class: 'edge-group', 'data-edge': `${edge.from}>${edge.to}` },
      s('title', {}, `${edge.from} → ${edge.to}\n${edge.labels.join('\n')}`),
      path,
      label,
      count,
    );
    edgeLayer.append(group);
    edgeViews.set(`${edge.from}>${edge.to}`, { group, path, count });
  }
  /** @type {Map<string, SVGElement>} */
  const nodeViews = new Map();
  const nodeLayer = s('g', { class: 'nodes' });
  for (const node of nodes) {
    const group = s(
      'g',
      { class: `state${node.final ? ' final' : ''}`, 'data-state': node.name },
      s('rect', {
        x: node.x - BOX.width / 2,
        y: node.y - BOX.height / 2,
        width: BOX.width,
        height: BOX.height,
        rx: node.final ? 22 : 8,
      }),
      s('text', { x: node.x, y: node.y + 5 }, node.name),
    );
    nodeLayer.append(group);
    nodeViews.set(node.name, group);
  }
  const element = s(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${VIEW_BOX.width} ${VIEW_BOX.height}`,
      role: 'img',
      'aria-label': 'The run machine',
    },
    defs,
    edgeLayer,
    nodeLayer,
  );

  /** @param {FoldState} state */
  function update(state) {
    for (const [name, group] of nodeViews) {
      group.classList.toggle('current', name === state.status);
      group.classList.toggle('visited', state.visited.includes(name) && name !== state.status);
      group.classList.toggle('succeeded', name === state.status && name === 'succeeded');
      group.classList.toggle('failed', name === state.status && name === 'failed');
    }
    element.setAttribute('data-current', state.status);
    for (const [key, view] of edgeViews) {
      const taken = state.edges[key] ?? 0;
      view.group.classList.toggle('taken', taken > 0);
      view.path.setAttribute('marker-end', taken > 0 ? 'url(#arrow-taken)' : 'url(#arrow)');
      view.count.textContent = taken > 0 ? `×${taken}` : '';
      view.group.setAttribute('data-count', String(taken));
    }
  }
  return { element, update };
}
