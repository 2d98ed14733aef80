/**
 * `baton worker` on a SQLite file with nothing to drive stays up until it is told to stop (it
 * once ended on its own, code 13, as soon as it had nothing scheduled that held the process),
 * and a SIGTERM stops it gracefully.
 */
import { describe, expect, it } from 'vitest';
import { CLI_MAIN as CLI } from '../helpers/run-node.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempDir, tempFiles } from '../helpers/temp.js';

describe('baton worker on SQLite', () => {
  it('stays up with nothing to drive until SIGTERM, then stops gracefully', async () => {
    const dir = tempDir();
    const worker = await spawnUntilJsonLine<{ type: string; worker: string }>(CLI, [
      'worker',
      '--db',
      tempFiles().db,
      '--json',
      '--dir',
      `${dir}/configs`,
    ]);
    expect(worker.first.type).toBe('worker');
    const ended = await worker.stop('SIGTERM');
    expect(ended, worker.stderr()).toEqual({ code: 0, signal: null });
    expect(worker.lines().map((line) => line.type)).toEqual(['worker', 'stopping']);
  });
});
