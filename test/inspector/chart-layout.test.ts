/** The chart's hand layout against the machine's own description: every state placed, every arrow drawn. */
import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import {
  LABEL,
  distanceToBox,
  edgeGeometry,
  placeLabels,
  segmentToBox,
  type Box,
} from '../../inspector/chart-geometry.js';
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
    // Opposite arrows run side by side instead of lying on each other; a lone arrow does not move.
    expect(edges.find((e) => e.from === 'planning' && e.to === 'executing')?.side).toBe(1);
    expect(edges.find((e) => e.from === 'pending' && e.to === 'planning')?.side).toBe(0);
    for (const edge of edges.filter((e) => e.side === 1)) {
      const there = edgeGeometry(POSITIONS[edge.from]!, POSITIONS[edge.to]!, edge.side).samples;
      const back = edgeGeometry(POSITIONS[edge.to]!, POSITIONS[edge.from]!, 1).samples;
      const apart = Math.min(...there.map((p) => Math.min(...back.map((q) => Math.hypot(p.x - q.x, p.y - q.y)))));
      expect(apart, `${edge.from}>${edge.to} apart from its opposite`).toBeGreaterThanOrEqual(15);
    }
    // All the events if they fit, else the first and how many more (the tooltip has them all).
    expect(edgeLabel(['cancel', 'timeout', 'budget_exceeded', 'plan_error'])).toBe('cancel +3');
    expect(edgeLabel(['approved', 'rejected'])).toBe('approved | rejected');
    expect(edgeLabel(['plan_ready', 'cancel', 'timeout'])).toBe('plan_ready +2');
    expect(edgeLabel(['cancel', 'timeout', 'rejected'])).toBe('cancel +2');
    expect(edgeLabel(['need_approval_of_a_person'])).toBe('need_approval_of_a_person');
  });

  it('names first the events that take an arrow by default, then those that take it only on a guard', () => {
    const { edges } = layoutChart(describeMachine());
    const edge = (from: string, to: string) => edges.find((e) => e.from === from && e.to === to);
    // A person's decision (approved, edited, responded, answered, extended) leaves waiting_human
    // for executing; a cancel goes there only to undo calls (its usual arrow is to failed); a
    // rejection only to undo calls or past an uncertain call or a question, an expiry only past
    // those (their usual arrow is back to planning).
    // So does a child run's end (`child_ended`), for a run that waited on it, and the end of a
    // call's work elsewhere (`task_ended`), and a resumed pause that had planned its step (`resumed`).
    expect(edge('waiting_human', 'executing')?.events).toEqual([
      'approved',
      'edited',
      'responded',
      'answered',
      'child_ended',
      'task_ended',
      'resumed',
      'extended',
      'cancel',
      'rejected',
      'expired',
    ]);
    expect(edge('waiting_human', 'executing')?.label).toBe('approved +10');
    // An extension goes back to planning only when the wait stopped a plan (its usual arrow is to executing).
    expect(edge('waiting_human', 'planning')?.events).toEqual(['rejected', 'expired', 'resumed', 'extended']);
    // A rejection or an expiry fails the run on a budget wait, an ending rejection, the last step.
    expect(edge('waiting_human', 'failed')?.events).toEqual(['cancel', 'timeout', 'rejected', 'expired']);
    expect(edge('planning', 'executing')?.events).toEqual(['plan_ready', 'cancel']);
    // A budget that runs out waits on a person only when the run's options ask: its usual arrow is to
    // failed; a plan goes there only when an operator asked a pause (its usual arrow is to executing).
    expect(edge('planning', 'waiting_human')?.events).toEqual(['timeout', 'budget_exceeded', 'plan_ready']);
    expect(edge('planning', 'failed')?.events).toEqual(['cancel', 'timeout', 'budget_exceeded', 'plan_error']);
    expect(edge('executing', 'waiting_human')?.events).toEqual([
      'need_approval',
      'need_input',
      'timeout',
      'budget_exceeded',
      'next_step',
    ]);
    expect(edge('executing', 'waiting_human')?.label).toBe('need_approval +4');
    expect(edge('executing', 'failed')?.events.at(-1)).toBe('next_step');
    expect(edge('executing', 'planning')?.label).toBe('next_step');
  });

  it('places every label beside its own arrow: inside the view, clear of states, other labels and other arrows', () => {
    const { nodes, edges } = layoutChart(describeMachine());
    const states = nodes.map((n) => ({ x: n.x - BOX.width / 2, y: n.y - BOX.height / 2, ...BOX }));
    const paths = edges.map((e) => {
      const a = POSITIONS[e.from]!;
      const b = POSITIONS[e.to]!;
      return edgeGeometry(a, b, e.side).samples;
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
      expect(own, `${name} not crossed by its own arrow`).toBeGreaterThan(0);
      paths.forEach((other, j) => {
        if (j !== i)
          expect(Math.min(...other.map((p) => distanceToBox(p, box))), `${name} vs arrow ${j}`).toBeGreaterThan(own);
      });
      for (const state of states) expect(overlap(box, state), `${name} covers a state`).toBe(false);
      edges.forEach((other, j) => {
        if (j !== i) expect(overlap(box, other.box), `${name} overlaps a label`).toBe(false);
      });
      // A run that has not taken the arrow draws the text alone: it too is beside its own arrow,
      // the half of the box nearer it, and nearer it than any other arrow.
      const { line } = edge;
      expect(line.width).toBeGreaterThanOrEqual(LABEL.char * edge.label.length);
      expect(line.height).toBe(LABEL.line);
      expect(line.x).toBeGreaterThanOrEqual(box.x);
      expect(line.x + line.width).toBeLessThanOrEqual(box.x + box.width);
      const halves = [box.y + LABEL.pad, box.y + LABEL.pad + LABEL.line];
      expect(halves, `${name}'s text on a line of its box`).toContain(line.y);
      const toLine = (points: { x: number; y: number }[], y: number) =>
        Math.min(...points.map((p) => distanceToBox(p, { ...line, y })));
      const ownLine = toLine(paths[i]!, line.y);
      expect(ownLine, `${name}'s text on the line nearer its arrow`).toBeLessThanOrEqual(
        toLine(
          paths[i]!,
          halves.find((y) => y !== line.y)!,
        ),
      );
      expect(ownLine, `${name}'s text beside its arrow`).toBeLessThanOrEqual(16);
      paths.forEach((other, j) => {
        if (j !== i) expect(toLine(other, line.y), `${name}'s text vs arrow ${j}`).toBeGreaterThan(ownLine);
      });
    });
  });

  it('measures how far an arrow is from a box as its drawn points say, and 0 when it crosses the box', () => {
    const box = { x: 100, y: 100, width: 80, height: 30 };
    let crossing = 0;
    for (let i = 0; i < 400; i += 1) {
      // Arrows from all around the box to all around it: through it, past a corner, beside it.
      const a = { x: 60 + ((i * 37) % 160), y: 60 + ((i * 53) % 110) };
      const b = { x: 60 + ((i * 71) % 160), y: 60 + ((i * 19) % 110) };
      if (Math.hypot(b.x - a.x, b.y - a.y) < 10) continue;
      const { samples, ends } = edgeGeometry(a, b, 0);
      const sampled = Math.min(...samples.map((p) => distanceToBox(p, box)));
      const exact = segmentToBox(ends, box);
      // The drawn points are at most 2 apart: never nearer than the exact figure, at most 1 farther.
      expect(exact, `${JSON.stringify(ends)}`).toBeLessThanOrEqual(sampled + 1e-9);
      expect(sampled - exact, `${JSON.stringify(ends)}`).toBeLessThanOrEqual(1);
      if (exact === 0) crossing += 1;
    }
    expect(crossing).toBeGreaterThan(20);
  });

  it('tells when a label found no spot that meets every rule', () => {
    const label = (gap: number) => {
      // Two states `gap` apart, an arrow between them, and a label that needs 80 of its length.
      const [a, b] = [
        { x: 70, y: 40 },
        { x: 70 + BOX.width + gap, y: 40 },
      ];
      const edge = { ...edgeGeometry(a!, b!, 0), size: { width: 74, height: 32 }, text: 40 };
      const nodes = [a!, b!].map((n) => ({ x: n.x - BOX.width / 2, y: n.y - BOX.height / 2, ...BOX }));
      return placeLabels({ view: { width: b!.x + 70, height: 120 }, nodes, edges: [edge] })[0]!;
    };
    // Too close: the label is placed anyway, at the least bad spot, and says it is not free.
    expect(label(40)).toMatchObject({ free: false, box: { width: 74, height: 32 } });
    expect(label(100).free).toBe(true);
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
