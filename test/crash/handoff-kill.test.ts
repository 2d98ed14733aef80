/**
 * A handoff and a handoff back across a SIGKILL, in real child processes: killed after the
 * handoff call settled but before its step committed, while the agent handed to plans its first
 * step, right after a person's approval of its call is committed, and after the hand-back settled
 * but before it committed. A new process on the same database finishes the run with the same
 * agent on top as when it stopped: one handoff and one hand-back in the log, each step planned by
 * the right agent, the refund made once. On a SQLite file and on PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { handoffOptions } from '../helpers/handoff-agents.js';
import { killThenResume } from '../helpers/kill-resume.js';
import { tempFiles } from '../helpers/temp.js';

const CHILD = 'test/helpers/handoff-child.ts';

/** Where each kill lands: the failpoint, and the hit of it (triage plans step 0, billing steps 1 and 2). */
const POINTS = [
  { name: 'after the handoff settled, before its step committed', failpoint: 'handoff.settled=kill' },
  { name: 'while the agent handed to plans', failpoint: 'planner.answered=kill@2' },
  { name: "after the approval of the agent's call is committed", failpoint: 'approval.committed=kill' },
  { name: 'after the hand-back settled, before its step committed', failpoint: 'handoff.settled=kill@2' },
] as const;

describe.each(ALL_DIALECTS)('a SIGKILL around a handoff (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  for (const point of POINTS) {
    it(`resumes with the same agent on top: killed ${point.name}`, async () => {
      const { database } = await freshDatabaseOf(dialect);
      const { effects } = tempFiles();
      const outcome = await killThenResume<{ run: string; status: string; answer: string }>(
        CHILD,
        { database, effects },
        point.failpoint,
      );
      expect(outcome).toMatchObject({ status: 'succeeded', answer: 'triage: {"refunded":"A1"}' });

      const runtime = createRuntime({ ...handoffOptions(database, effects), recover: false });
      try {
        expect(readFileSync(effects, 'utf8').trim().split('\n')).toEqual([`A1 ${outcome.run}.s1.c0`]);
        expect((await runtime.steps(outcome.run)).map((s) => s.agent)).toEqual([
          'triage',
          'billing',
          'billing',
          'triage',
        ]);
        const told = [];
        for await (const event of runtime.events(outcome.run, { follow: false })) {
          if (event.type === 'handoff') told.push(`${String(event.data.from)}→${String(event.data.to)}`);
        }
        expect(told).toEqual(['triage→billing', 'billing→triage']);
        expect((await runtime.get(outcome.run)).handoffStack).toEqual([]);
      } finally {
        await runtime.close();
      }
    });
  }
});
