/** The chart's hand layout against the machine's own description: every state placed, every arrow drawn. */
import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { BOX, POSITIONS, VIEW_BOX, edgeLabel, layoutChart } from '../../inspector/chart-layout.js';
import { describeMachine, RUN_STATUSES } from '../../src/index.js';

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
    expect(edgeLabel(['cancel', 'timeout', 'budget_exceeded', 'plan_error'])).toBe('cancel +3');
    expect(edgeLabel(['approved', 'rejected'])).toBe('approved | rejected');
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
