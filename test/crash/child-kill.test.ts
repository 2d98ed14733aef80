/**
 * A SIGKILL at every point of a call of an agent tool, in real child processes: before the child
 * run is created (`child.starting`), after its row is committed and before the parent waits on it
 * (`child.created`), while the child runs (its planner answered, nothing of it saved), and after
 * the child's end is durable but before the parent took its outcome (`child.ended`). A new
 * process on the same database finishes the run: there is exactly one child, its effect happened
 * once, and its answer reached the parent once. On a SQLite file and on PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { killThenResume } from '../helpers/kill-resume.js';
import { tempFiles } from '../helpers/temp.js';
import { treeOptions } from '../helpers/tree-agents.js';

const CHILD = 'test/helpers/tree-child.ts';

/** Where each kill lands: the failpoint, and the hit of it (the parent plans first, then its child). */
const POINTS = [
  { name: 'before the child row', failpoint: 'child.starting=kill' },
  { name: 'after the child row, before the parent waits', failpoint: 'child.created=kill' },
  { name: 'while the child runs', failpoint: 'planner.answered=kill@2' },
  { name: "after the child ended, before the parent's result", failpoint: 'child.ended=kill' },
] as const;

describe.each(ALL_DIALECTS)('a SIGKILL at each point of a call of an agent tool (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  for (const point of POINTS) {
    it(`leaves one child and delivers its result once: killed ${point.name}`, async () => {
      const { database } = await freshDatabaseOf(dialect);
      const { effects } = tempFiles();
      const outcome = await killThenResume<{ parent: string; status: string; answer: string }>(
        CHILD,
        { database, effects },
        point.failpoint,
      );
      expect(outcome).toMatchObject({ status: 'succeeded', answer: 'parent: clerk: {"archived":"a.json"}' });

      const runtime = createRuntime({ ...treeOptions(database, effects), recover: false });
      try {
        const { runs } = await runtime.list({ limit: 100 });
        const children = runs.filter((run) => run.parent !== null);
        expect(children.map((run) => run.id)).toEqual([`${outcome.parent}.s0.c0.child`]);
        expect(children[0]).toMatchObject({ status: 'succeeded', parent: { runId: outcome.parent } });
        expect(readFileSync(effects, 'utf8').trim().split('\n')).toEqual([
          `a.json ${outcome.parent}.s0.c0.child.s0.c0`,
        ]);
        const told = [];
        for await (const event of runtime.events(outcome.parent, { follow: false })) {
          if (event.type === 'child') told.push(event.data.status);
        }
        expect(told).toEqual(['started', 'succeeded']);
        const [call] = await runtime.toolCalls(outcome.parent);
        expect(call).toMatchObject({ status: 'succeeded', childRunId: `${outcome.parent}.s0.c0.child` });
      } finally {
        await runtime.close();
      }
    });
  }
});
