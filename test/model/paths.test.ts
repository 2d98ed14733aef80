import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRunModel, runPath, type PathOutcome, type RunPath } from '../../src/testing/index.js';
import { tempDir } from '../helpers/temp.js';

const model = createRunModel();

function nameOf(path: RunPath): string {
  const steps = path.steps.map(({ event, before }) => {
    if (event.type === 'next_step' && event.loopSignature) return 'next_step(same failure)';
    if (event.type === 'need_approval') return `need_approval(${event.reason})`;
    // A budget wait is ended, not rejected.
    if (event.type === 'rejected' && before.context.waitReason === 'budget') return 'end';
    if (event.type === 'rejected' && event.terminate) return 'rejected(terminate)';
    if (event.type === 'extended') return `extended(${before.context.budgetWait?.budget})`;
    if (event.type === 'expired') return `expired(${event.outcome})`;
    return event.type;
  });
  const asks = path.steps[0]!.before.context.limits.onBudgetExceeded === 'ask' ? ' (asking on budget)' : '';
  return `${steps.join(' → ')} ⇒ ${String(path.steps.at(-1)!.after.value)}${asks}`;
}

/** What must not depend on whether the runtime was restarted between events. */
function comparable(outcome: PathOutcome) {
  return {
    states: outcome.states,
    status: outcome.final.status,
    stopReason: outcome.final.stopReason,
    answer: outcome.final.answer,
    effects: outcome.effects.length,
    ledger: outcome.ledger,
  };
}

describe('generated paths through the real runtime', () => {
  for (const path of model.paths) {
    it(`takes ${nameOf(path)}, straight and with a restore before every event`, async () => {
      const straight = await runPath(path, { database: join(tempDir(), 'straight.db') });
      expect(straight.restarts).toBe(
        path.steps.some((s) => s.event.type === 'need_approval' && s.event.reason === 'uncertain_side_effect') ? 1 : 0,
      );
      const restored = await runPath(path, { database: join(tempDir(), 'restored.db'), restoreEveryStep: true });
      expect(restored.restarts).toBeGreaterThanOrEqual(path.steps.length - 1);
      expect(comparable(restored)).toEqual(comparable(straight));
    });
  }

  it('covers every transition with the paths it runs', () => {
    const taken = new Set(model.paths.flatMap((p) => p.steps.map((s) => s.edge.id)));
    expect(taken.size).toBe(model.edges.length);
    expect(new Set(model.paths.map(nameOf)).size).toBe(model.paths.length);
  });
});
