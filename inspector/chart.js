// @ts-check
/**
 * The state chart: the machine's states and arrows (from its description), with a run's current
 * state lit, the states it visited marked, and each arrow it took labelled with how many times.
 */
import { LABEL } from './chart-geometry.js';
import { BOX, VIEW_BOX, layoutChart } from './chart-layout.js';
import { s } from './dom.js';

/** @typedef {import('./types.js').FoldState} FoldState */

/**
 * Draws the chart once; `update` lights it for a state of the run.
 * @param {import('./types.js').MachineDescription} machine
 * @returns {{ element: SVGElement, update: (state: FoldState) => void }}
 */
export function createChart(machine) {
  const { nodes, edges } = layoutChart(machine);
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
  /** @type {Map<string, { group: SVGElement, labelGroup: SVGElement, path: SVGElement, count: SVGElement }>} */
  const edgeViews = new Map();
  const edgeLayer = s('g', { class: 'edges' });
  const labelLayer = s('g', { class: 'edge-labels' });
  for (const edge of edges) {
    const key = `${edge.from}>${edge.to}`;
    const path = s('path', { d: edge.d, class: 'edge', 'marker-end': 'url(#arrow)' });
    const cx = (edge.box.x + edge.box.width / 2).toFixed(1);
    // Two lines in the label's box: the events on the line nearer the arrow, and on the other how
    // often this run took the arrow.
    const top = edge.box.y + LABEL.pad;
    const countTop = edge.line.y > top ? top : top + LABEL.line;
    const label = s('text', { x: cx, y: (edge.line.y + LABEL.line - 3).toFixed(1), class: 'edge-label' }, edge.label);
    const count = s('text', { x: cx, y: (countTop + LABEL.line - 3).toFixed(1), class: 'edge-count' });
    const title = `${edge.from} → ${edge.to}\n${edge.labels.join('\n')}`;
    const group = s('g', { class: 'edge-group', 'data-edge': key }, s('title', {}, title), path);
    edgeLayer.append(group);
    // Labels are drawn above every arrow and state, so no arrow runs through another's label.
    const labelGroup = s(
      'g',
      { class: 'edge-label-group', 'data-edge-label': key },
      s('title', {}, title),
      label,
      count,
    );
    labelLayer.append(labelGroup);
    edgeViews.set(key, { group, labelGroup, path, count });
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
    labelLayer,
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
      view.labelGroup.classList.toggle('taken', taken > 0);
      view.path.setAttribute('marker-end', taken > 0 ? 'url(#arrow-taken)' : 'url(#arrow)');
      view.count.textContent = taken > 0 ? `taken ${taken}×` : '';
      view.group.setAttribute('data-count', String(taken));
    }
  }
  return { element, update };
}
