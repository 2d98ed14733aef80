/** The chart's hand layout against the machine's own description: every state placed, every arrow drawn. */
import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { LABEL, distanceToBox, edgeGeometry, type Box } from '../../inspector/chart-geometry.js';
import { BOX, POSITIONS, VIEW_BOX, edgeLabel, layoutChart } from '../../inspector/chart-layout.js';
import { describeMachine } from '../../machines/index.js';
import { RUN_STATUSES } from '../../src/index.js';

describe('chart layout', () => {
  it('places every state of the run machine inside the view, without overlaps', () => {
    const { nodes } = layoutChart(describeMachine());
    expect(nodes.map((n) => n.name)).toEqual([...RUN_STATUSES]);
    for (const node of nodes) {
      expect(node.x - BOX.width / 2).toBeGreaterThanOrEqual(0);
      expect(node.x + BOX.width / 2).toBeLessThanOrEqual(VIEW_BOX.width);
      expect(node.y - BOX.height / 2).toBeGreaterThanOrEqual(0);
      expect(node.y + BOX.height / 2).toBeLessThanOrEqual(VIEW_BOX.height);
      for (const other of nodes) {
        if (other === node) continue;
        const apart = Math.abs(other.x - node.x) >= BOX.width || Math.abs(other.y - node.y) >= BOX.height;
        expect(apart, `${node.name} overlaps ${other.name}`).toBe(true);
      }
    }
    expect(nodes.filter((n) => n.final).map((n) => n.name)).toEqual(['succeeded', 'failed']);
  });

  it('draws one arrow for each pair of states a transition connects, naming every guard', () => {
    const machine = describeMachine();
    const { edges } = layoutChart(machine);
    const pairs = new Set(
      machine.transitions
        .filter((t) => !t.internal && t.target && t.target !== t.source)
        .map((t) => `${t.source}>${t.target}`),
    );
    expect(new Set(edges.map((e) => `${e.from}>${e.to}`))).toEqual(pairs);
    const rejectedToFailed = edges.find((e) => e.from === 'waiting_human' && e.to === 'failed');
    expect(rejectedToFailed?.labels).toEqual(
      expect.arrayContaining([
        'rejected [and(isPendingApproval, isTerminatingRejection)]',
        'rejected [and(isPendingApproval, isLastStep)]',
      ]),
    );
    // Opposite arrows bow apart instead of lying on each other.
    expect(edges.find((e) => e.from === 'planning' && e.to === 'executing')?.curve).toBe(1);
    expect(edges.find((e) => e.from === 'pending' && e.to === 'planning')?.curve).toBe(0);
    expect(edgeLabel(['cancel', 'timeout', 'budget_exceeded', 'plan_error'])).toBe('cancel +3 more');
    expect(edgeLabel(['approved', 'rejected'])).toBe('approved | rejected');
    expect(edgeLabel(['plan_ready', 'cancel', 'timeout'])).toBe('plan_ready +2 more');
    expect(edgeLabel(['cancel', 'timeout', 'rejected'])).toBe('cancel +2 more');
  });

  it('names first the events that take an arrow by default, then those that take it only on a guard', () => {
    const { edges } = layoutChart(describeMachine());
    const edge = (from: string, to: string) => edges.find((e) => e.from === from && e.to === to);
    // An approval leaves waiting_human for executing; a cancel goes there only to undo calls
    // (its usual arrow is to failed), a rejection only to undo or for an uncertain call.
    expect(edge('waiting_human', 'executing')?.events).toEqual(['approved', 'cancel', 'rejected']);
    expect(edge('waiting_human', 'executing')?.label).toBe('approved +2 more');
    expect(edge('waiting_human', 'planning')?.events).toEqual(['rejected']);
    expect(edge('waiting_human', 'failed')?.events).toEqual(['cancel', 'timeout', 'rejected']);
    expect(edge('planning', 'executing')?.events).toEqual(['plan_ready', 'cancel']);
    expect(edge('executing', 'failed')?.events.at(-1)).toBe('next_step');
    expect(edge('executing', 'planning')?.label).toBe('next_step');
  });

  it('places every label beside its own arrow: inside the view, clear of states, other labels and other arrows', () => {
    const { nodes, edges } = layoutChart(describeMachine());
    const states = nodes.map((n) => ({ x: n.x - BOX.width / 2, y: n.y - BOX.height / 2, ...BOX }));
    const paths = edges.map((e) => {
      const a = POSITIONS[e.from]!;
      const b = POSITIONS[e.to]!;
      return edgeGeometry(a, b, e.curve).samples;
    });
    const overlap = (a: Box, b: Box) =>
      a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    edges.forEach((edge, i) => {
      const name = `${edge.from}>${edge.to}`;
      expect(edge.free, `${name} found a free spot`).toBe(true);
      const { box } = edge;
      // Room for the label and for the count line under it, at the font's character width.
      expect(box.width).toBeGreaterThanOrEqual(LABEL.char * Math.max(edge.label.length, 'taken 999×'.length));
      expect(box.height).toBeGreaterThanOrEqual(2 * LABEL.line);
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(VIEW_BOX.width);
      expect(box.y + box.height).toBeLessThanOrEqual(VIEW_BOX.height);
      const own = Math.min(...paths[i]!.map((p) => distanceToBox(p, box)));
      expect(own, `${name} beside its arrow`).toBeLessThanOrEqual(16);
      paths.forEach((other, j) => {
        if (j !== i)
          expect(Math.min(...other.map((p) => distanceToBox(p, box))), `${name} vs arrow ${j}`).toBeGreaterThan(own);
      });
      for (const state of states) expect(overlap(box, state), `${name} covers a state`).toBe(false);
      edges.forEach((other, j) => {
        if (j !== i) expect(overlap(box, other.box), `${name} overlaps a label`).toBe(false);
      });
    });
  });

  it('fails loudly for a state it has no position for', () => {
    const changed = setup({}).createMachine({
      id: 'run',
      initial: 'pending',
      states: { pending: { on: { start: 'reviewing' } }, reviewing: {} },
    });
    expect(() => layoutChart(describeMachine(changed))).toThrow(/no position for state 'reviewing'/);
    expect(Object.keys(POSITIONS)).toEqual(expect.arrayContaining([...RUN_STATUSES]));
  });
});
