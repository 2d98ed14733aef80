/**
 * Images an MCP tool returns, end to end: the real note server's `chart` answers with a text and a
 * PNG; the image is stored as an `image/png` artifact (not as base64 inside a JSON output), the
 * result and the model's observation name it, and an OpenAI-compatible planner with `images: true`
 * sends it as an `image_url` part (a data URL) in a user message after the tool results, which a
 * text-only planner (the default) does not.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIPlanner } from '../../src/planner/index.js';
import { toToolCallJson } from '../../src/server/index.js';
import { createMcpTools, type McpToolset } from '../../src/tools/mcp/index.js';
import { startFakeOpenAI, textReply, toolCallsReply, type FakeOpenAI } from '../helpers/fake-openai.js';
import { stdioNotes } from '../helpers/mcp.js';
import { noisePng } from '../helpers/png.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { tempDir } from '../helpers/temp.js';

let model: FakeOpenAI;
const toolsets: McpToolset[] = [];
beforeEach(async () => {
  model = await startFakeOpenAI();
});
afterEach(async () => {
  for (const set of toolsets.splice(0)) await set.close();
  await model.close();
});

type Part = { type: string; text?: string; image_url?: { url: string } };
type BodyMessage = { role: string; content?: string | Part[] | null; tool_call_id?: string };

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const png = (seed: number) => noisePng(128, seed);

/** Two charts in one step, then an answer, with the planner given `images`. */
async function chartRun(images: boolean | undefined) {
  const dir = tempDir();
  const notes = await createMcpTools(stdioNotes(join(dir, 'journal.jsonl'), false, true), { include: ['chart'] });
  toolsets.push(notes);
  model.enqueue(
    toolCallsReply([
      { name: 'chart', arguments: { seed: 1 } },
      { name: 'chart', arguments: { seed: 2 } },
    ]),
    textReply('two charts'),
  );
  const planner = createOpenAIPlanner({
    model: 'fake-model',
    instructions: 'Draw.',
    baseURL: model.baseURL,
    apiKey: 'sk-test',
    ...(images === undefined ? {} : { images }),
  });
  const runtime = openRuntime({ database: join(dir, 'baton.db'), planner, tools: notes.tools });
  const run = await runtime.start({ input: 'chart the notes' });
  expect((await runtime.wait(run.id)).status).toBe('succeeded');
  return { runtime, runId: run.id, second: model.requests[1]!.body.messages as BodyMessage[] };
}

describe('MCP images', () => {
  it('stores an image a tool returns as an artifact of its media type, and gives it to a model that accepts images', async () => {
    const { runtime, runId, second } = await chartRun(true);
    const ledger = await runtime.toolCalls(runId);
    for (const [index, seed] of [1, 2].entries()) {
      // The output is the text; the image is named by its artifact, not carried as base64.
      expect(ledger[index]!.result).toMatchObject({
        status: 'ok',
        content: `chart ${seed}`,
        truncated: false,
        images: [{ sha256: sha256(png(seed)), size: png(seed).length, mediaType: 'image/png' }],
      });
      // On the wire (/tool-calls, /export, show --json) the result's own fields are snake_case.
      expect(toToolCallJson(ledger[index]!).result).toMatchObject({
        images: [{ sha256: sha256(png(seed)), size: png(seed).length, media_type: 'image/png' }],
      });
      const artifact = await runtime.artifact(runId, sha256(png(seed)));
      expect(artifact.mediaType).toBe('image/png');
      expect(artifact.content.equals(png(seed))).toBe(true);
    }
    expect((await runtime.artifacts(runId)).map((a) => a.mediaType)).toEqual(['image/png', 'image/png']);
    const stored = (await eventsOf(runtime, runId)).filter((e) => e.type === 'artifact');
    expect(stored.map((e) => e.data)).toEqual([
      { sha256: sha256(png(1)), size: png(1).length, media_type: 'image/png' },
      { sha256: sha256(png(2)), size: png(2).length, media_type: 'image/png' },
    ]);

    // The tool results name the images; the images follow them in one user message, as data URLs.
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
    expect(second[3]!.content).toBe(
      `chart 1\n[image: image/png, ${png(1).length} bytes, stored as artifact sha256:${sha256(png(1))}]`,
    );
    const parts = second[5]!.content as Part[];
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url', 'text', 'image_url']);
    expect(parts[0]!.text).toContain(`(chart), artifact sha256:${sha256(png(1))}`);
    expect(parts[1]!.image_url!.url).toBe(`data:image/png;base64,${png(1).toString('base64')}`);
    expect(parts[3]!.image_url!.url).toBe(`data:image/png;base64,${png(2).toString('base64')}`);
  });

  it('by default the model is text-only: it sees each image named in the result, never its bytes', async () => {
    const { runtime, runId, second } = await chartRun(undefined);
    expect((await runtime.artifacts(runId)).map((a) => a.mediaType)).toEqual(['image/png', 'image/png']);
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(second[4]!.content).toContain(`[image: image/png, ${png(2).length} bytes, stored as artifact sha256:`);
    expect(JSON.stringify(second)).not.toContain(png(1).toString('base64').slice(0, 64));
  });
});
