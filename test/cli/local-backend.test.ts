import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { baton, jsonLines, startServe } from './cli-child.js';

type Shown = {
  run: { id: string; tenant_id: unknown };
  tool_calls: { tool: string; risk: unknown; result: Record<string, unknown> }[];
};

describe('the in-process backend', () => {
  it('describes a run as the API does: the same tenant, risks and snake_case tool results', async () => {
    const dir = tempDir();
    const flags = ['--db', join(dir, 'b.db'), '--dir', join(dir, 'configs')];
    const ran = await baton(['run', 'Archive the stale configs', '--approve', '--json', ...flags]);
    expect(ran.code, ran.stderr).toBe(0);
    const { run } = jsonLines(ran.stdout).at(-1) as { run: { id: string } };

    const server = await startServe(['--port', '0', '--json', ...flags]);
    try {
      const [local, remote, localExport, remoteExport] = await Promise.all([
        baton(['show', run.id, '--json', '--db', flags[1]!]),
        baton(['show', run.id, '--json', '--url', server.url]),
        baton(['export', run.id, '--db', flags[1]!]),
        baton(['export', run.id, '--url', server.url]),
      ]);
      const shownLocally = JSON.parse(local.stdout) as Shown;
      expect(shownLocally).toEqual(JSON.parse(remote.stdout));
      expect(shownLocally.run.tenant_id).toBe('default');
      const list = shownLocally.tool_calls.find((call) => call.tool === 'fs.list')!;
      expect(list.risk).toBe('low');
      expect(shownLocally.tool_calls.find((call) => call.tool === 'configs.archive')!.risk).toBe('high');
      for (const call of shownLocally.tool_calls) {
        expect(call.result).toHaveProperty('duration_ms', expect.any(Number));
        expect(call.result).not.toHaveProperty('durationMs');
      }
      const drop = (doc: string) => ({ ...(JSON.parse(doc) as object), exported_at: null });
      expect(drop(localExport.stdout)).toEqual(drop(remoteExport.stdout));
      const exported = JSON.parse(localExport.stdout) as { tool_calls: Shown['tool_calls'] };
      expect(exported.tool_calls[0]!.result).toHaveProperty('duration_ms');

      // The server's --json log gives each event in the API's shape too.
      const over = await baton(['run', 'Archive', '--reject', '--url', server.url]);
      expect(over.code, over.stderr).toBe(0);
      const logged = jsonLines(server.output().replace(/^[^{].*$/gm, '')).filter((line) => line.type === 'event');
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) {
        expect(Object.keys(line.event as object).sort()).toEqual(['created_at', 'data', 'run_id', 'seq', 'type']);
      }
    } finally {
      await server.stop();
    }
  });
});
