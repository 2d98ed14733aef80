import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { delayed, startFakeOpenAI, textReply, toolCallsReply } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';
import { baton, jsonLines, startServe } from './cli-child.js';

describe('baton run against a server planning with a model', () => {
  it("shows the model's text inline as it streams, then the answer", async () => {
    const model = await startFakeOpenAI();
    const dir = tempDir();
    const args = ['--port', '0', '--db', join(dir, 'b.db'), '--dir', join(dir, 'configs')];
    const server = await startServe([...args, '--base-url', model.baseURL, '--model', 'fake']);
    try {
      // Drafts are live only, and the client subscribes after the run has started: the replies
      // whose drafts are checked wait a while, so the client's stream is open by then.
      model.enqueue(
        toolCallsReply([{ name: 'fs__list', arguments: { path: '.' } }], { content: 'Let me look.' }),
        delayed(1_000, textReply('Nothing needs archiving today.', undefined, { chunkSize: 4 })),
        delayed(1_000, textReply('Nothing to archive.', undefined, { chunkSize: 4 })),
      );
      const text = await baton(['run', 'Check the configs', '--url', server.url]);
      expect(server.output()).toMatch(/^Agent: demo \(planner: model fake at /m);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^\[\d+\] step 0: fs\.list \(Let me look\.\)$/m);
      expect(text.stdout).toMatch(/^ {2}… Nothing needs archiving today\.\n\[\d+\] step 1: final answer$/m);
      expect(text.stdout).toMatch(/^Answer: Nothing needs archiving today\.$/m);

      const json = await baton(['run', 'Check again', '--json', '--url', server.url]);
      expect(json.code, json.stderr).toBe(0);
      const drafts = jsonLines(json.stdout).filter((line) => line.type === 'draft') as { data: { text: string } }[];
      expect(drafts.map((d) => d.data.text).join('')).toBe('Nothing to archive.');
      expect(jsonLines(json.stdout).at(-1)).toMatchObject({ run: { answer: 'Nothing to archive.' } });
    } finally {
      await server.stop();
      await model.close();
    }
  });

  it('never prints a password or key that --base-url carries', async () => {
    const dir = tempDir();
    const baseURL = 'http://bob:hunter2-secret@127.0.0.1:9/v1?api_key=sk-live-secret';
    for (const json of [false, true]) {
      const server = await startServe([
        '--port',
        '0',
        '--db',
        join(dir, 'b.db'),
        '--dir',
        join(dir, 'configs'),
        '--base-url',
        baseURL,
        ...(json ? ['--json'] : []),
      ]);
      try {
        expect(server.output()).toContain('127.0.0.1:9/v1');
        expect(server.output()).not.toContain('hunter2-secret');
        expect(server.output()).not.toContain('sk-live-secret');
      } finally {
        await server.stop();
      }
    }
  });

  it('never prints a password or key that --base-url carries from run or demo, text or --json', async () => {
    const dir = tempDir();
    const baseURL = 'http://bob:hunter2-secret@127.0.0.1:9/v1?api_key=sk-live-secret';
    let n = 0;
    for (const command of [['run', 'Archive the stale configs'], ['demo']])
      for (const json of [false, true]) {
        const db = join(dir, `b${++n}.db`);
        const out = await baton(
          [
            ...command,
            '--db',
            db,
            '--dir',
            join(dir, `configs${n}`),
            '--base-url',
            baseURL,
            ...(json ? ['--json'] : []),
          ],
          { env: { OPENAI_API_KEY: 'sk-test' }, timeoutMs: 120_000 },
        );
        const printed = out.stdout + out.stderr;
        // Text names the model's address (masked); --json lines carry no planner description.
        if (!json) expect(printed, printed).toContain('127.0.0.1:9/v1');
        expect(printed).toContain('planner.unavailable');
        expect(printed).not.toContain('hunter2-secret');
        expect(printed).not.toContain('sk-live-secret');
      }
  });
});
