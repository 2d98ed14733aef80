/**
 * What a run produced, over HTTP: the artifacts it stored (large tool outputs) by their sha256,
 * with their media type, only to callers who may see the run and only for artifacts that run
 * stored; and the whole run as one export document.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reportPlanner, reportTool } from '../helpers/report-tool.js';
import { startTestServer, token } from '../helpers/server.js';

const SUBMIT = token('acme-submit');
const VIEW = token('acme-view');
const OTHER = token('globex-admin');

async function request(url: string, path: string, bearer: string) {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('artifacts and export over HTTP', () => {
  it('serves an artifact the run stored, to its tenant only, and exports the whole run', async () => {
    const server = await startTestServer({
      runtime: () => ({ planner: reportPlanner(), tools: [reportTool] }),
    });
    const created = await fetch(`${server.url}/v1/runs?wait=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SUBMIT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'q3' }),
    });
    const run = (await created.json()) as { id: string; status: string };
    expect(run.status).toBe('succeeded');

    const listed = await request(server.url, `/v1/runs/${run.id}/artifacts`, VIEW);
    const { artifacts } = JSON.parse(listed.bytes.toString()) as {
      artifacts: { sha256: string; size: number; media_type: string; url: string }[];
    };
    expect(artifacts).toHaveLength(1);
    const [ref] = artifacts;
    expect(ref!.url).toBe(`/v1/runs/${run.id}/artifacts/${ref!.sha256}`);

    const fetched = await request(server.url, ref!.url, VIEW);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe(ref!.media_type);
    expect(fetched.bytes.length).toBe(ref!.size);
    expect(createHash('sha256').update(fetched.bytes).digest('hex')).toBe(ref!.sha256);
    expect(fetched.bytes.toString()).toContain('line 1999 of q3');
    expect(fetched.headers.get('etag')).toBe(`"${ref!.sha256}"`);
    // Untrusted bytes from the inspector's origin: never sniffed into another type; nor is JSON.
    expect(fetched.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await request(server.url, `/v1/runs/${run.id}`, VIEW)).headers.get('x-content-type-options')).toBe(
      'nosniff',
    );

    // Another tenant's caller learns nothing; a hash this run did not store is not found.
    const foreign = await request(server.url, ref!.url, OTHER);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.bytes.toString()).error.code).toBe('run.not_found');
    const unknown = await request(server.url, `/v1/runs/${run.id}/artifacts/${'0'.repeat(64)}`, VIEW);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.bytes.toString()).error.code).toBe('artifact.not_found');

    // The export: one document with everything, the artifact referenced by URL.
    const exported = await request(server.url, `/v1/runs/${run.id}/export`, VIEW);
    expect(exported.status).toBe(200);
    const doc = JSON.parse(exported.bytes.toString()) as Record<string, unknown> & {
      events: { seq: number; type: string }[];
      tool_calls: { id: string; status: string; result: { artifact?: { sha256: string } } }[];
    };
    expect(doc).toMatchObject({ format: 'baton.run-export', version: 1, run: { id: run.id, status: 'succeeded' } });
    expect(doc.events.map((e) => e.seq)).toEqual(doc.events.map((_, i) => i + 1));
    expect(doc.events.some((e) => e.type === 'artifact')).toBe(true);
    expect(doc.tool_calls[0]!.result.artifact?.sha256).toBe(ref!.sha256);
    expect(doc.artifacts).toEqual(artifacts);
    expect(doc).toHaveProperty('steps');
    expect(doc).toHaveProperty('approvals');
    expect(doc).toHaveProperty('trace.spans');
    expect((await request(server.url, `/v1/runs/${run.id}/export`, OTHER)).status).toBe(404);
  });
});
