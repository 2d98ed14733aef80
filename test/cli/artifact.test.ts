/** `baton artifact` and `baton export`, in process on a database file and against a server. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { reportPlanner, reportTool } from '../helpers/report-tool.js';
import { startTestServer, token } from '../helpers/server.js';
import { tempFiles } from '../helpers/temp.js';
import { batonInProcess } from './cli-child.js';

interface ExportJson {
  format: string;
  run: { id: string; status: string };
  events: { seq: number }[];
  artifacts: { sha256: string; size: number; media_type: string; url: string }[];
}

describe('baton artifact and baton export', () => {
  it('write what a run stored and the whole run, in process and over HTTP', async () => {
    const { db, dir } = tempFiles();
    const runtime = createRuntime({ database: db, planner: reportPlanner(), tools: [reportTool] });
    const run = await runtime.wait((await runtime.start({ input: 'q4' })).id);
    await runtime.close();

    const exported = await batonInProcess(['export', run.id, '--db', db]);
    expect(exported.code).toBe(0);
    const doc = JSON.parse(exported.stdout) as ExportJson;
    expect(doc).toMatchObject({ format: 'baton.run-export', run: { id: run.id, status: 'succeeded' } });
    const [ref] = doc.artifacts;
    expect(ref!.url).toBe(`/v1/runs/${run.id}/artifacts/${ref!.sha256}`);

    const printed = await batonInProcess(['artifact', run.id, ref!.sha256, '--db', db]);
    // As the event log prints it, with its algorithm: the same bytes.
    const prefixed = await batonInProcess(['artifact', run.id, `sha256:${ref!.sha256}`, '--db', db]);
    expect(prefixed.code, prefixed.stderr).toBe(0);
    expect(prefixed.stdout).toBe(printed.stdout);
    expect(printed.code).toBe(0);
    expect(createHash('sha256').update(printed.stdout).digest('hex')).toBe(ref!.sha256);
    const out = join(dir, 'report.json');
    const saved = await batonInProcess(['artifact', run.id, ref!.sha256, '--db', db, '--out', out, '--json']);
    expect(JSON.parse(saved.stdout)).toEqual({
      sha256: ref!.sha256,
      size: ref!.size,
      media_type: ref!.media_type,
      path: out,
    });
    expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(ref!.sha256);
    const missing = await batonInProcess(['artifact', run.id, 'f'.repeat(64), '--db', db]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('artifact.not_found');

    // Against a server: the same, through the API.
    const server = await startTestServer({ runtime: () => ({ planner: reportPlanner(), tools: [reportTool] }) });
    // Started over the API with a tenant's token, so the tenant's tokens see it.
    const created = await fetch(`${server.url}/v1/runs?wait=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token('acme-submit')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'q4' }),
    });
    const remote = (await created.json()) as { id: string };
    const target = ['--url', server.url, '--token', token('acme-view')];
    const remoteDoc = JSON.parse((await batonInProcess(['export', remote.id, ...target])).stdout) as ExportJson;
    expect(remoteDoc.run.id).toBe(remote.id);
    expect(remoteDoc.artifacts.map((a) => a.sha256)).toEqual([ref!.sha256]);
    const fetched = await batonInProcess(['artifact', remote.id, ref!.sha256, ...target]);
    expect(fetched.code).toBe(0);
    expect(createHash('sha256').update(fetched.stdout).digest('hex')).toBe(ref!.sha256);
  });
});
