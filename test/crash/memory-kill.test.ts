/**
 * The versioned memory across a SIGKILL, in real child processes: a run planned its step with
 * memory version 1 and waits for approval; version 2 is written meanwhile; the process is killed
 * right after the approval is committed, or once the step's memory calls are durable and its
 * deploy has started. A new process finishes the run: its read is of version 1 (not the newer
 * one), its write of the session's memory happened once, the deploy of what it read ran once,
 * and its next step plans with version 2. On a SQLite file and on PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { memoryOptions } from '../helpers/memory-agents.js';
import { killThenResume } from '../helpers/kill-resume.js';
import { tempFiles } from '../helpers/temp.js';

const CHILD = 'test/helpers/memory-child.ts';

const POINTS = [
  { name: 'right after the approval is committed', failpoint: 'approval.committed=kill' },
  { name: "once the step's memory calls are durable and its deploy started", failpoint: 'tool.started=kill' },
] as const;

describe.each(ALL_DIALECTS)('the memory a run read, across a SIGKILL (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  for (const point of POINTS) {
    it(`reads the version it read before the crash: killed ${point.name}`, async () => {
      const { database } = await freshDatabaseOf(dialect);
      const { effects } = tempFiles();
      const outcome = await killThenResume<{ run: string; status: string; answer: string }>(
        CHILD,
        { database, effects },
        point.failpoint,
      );
      expect(outcome.status).toBe('succeeded');
      expect(JSON.parse(outcome.answer)).toEqual({
        read: { version: 1, key: 'plan', value: 'v1', found: true },
        now: 'v2',
      });
      expect(readFileSync(effects, 'utf8').trim().split('\n')).toEqual([`v1 ${outcome.run}.s0.c2`]);

      const runtime = createRuntime({ ...memoryOptions(database, effects), recover: false });
      try {
        expect((await runtime.steps(outcome.run)).map((s) => s.memoryVersion)).toEqual([1, 3]);
        const calls = await runtime.toolCalls(outcome.run);
        expect(calls.map((c) => [c.tool, c.status])).toEqual([
          ['memory.read', 'succeeded'],
          ['memory.write', 'succeeded'],
          ['ops.deploy', 'succeeded'],
        ]);
      } finally {
        await runtime.close();
      }
    });
  }
});
