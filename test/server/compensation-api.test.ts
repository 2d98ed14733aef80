/**
 * Compensation over the API and the CLI, against a real server on loopback: the demo's archive
 * tool archives files; `baton cancel --compensate --url` undoes it (the files are back) and
 * prints the report; `POST /v1/runs/{id}/approvals/{id}` with `terminate` and `compensate` does the
 * same through a rejection; bad bodies are refused and change nothing.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { configsArchive } from '../../src/demo/index.js';
import { baton } from '../cli/cli-child.js';
import { apiClient, pollRun, startTestServer, type Json } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { readShop } from '../helpers/shop.js';
import { scaled } from '../helpers/limits.js';

const deploy = defineTool({
  name: 'ops.deploy',
  description: 'Deploy (a human approves)',
  input: z.object({}),
  effect: 'idempotent',
  risk: 'high',
  execute: () => 'deployed',
});

/** A server whose runs archive two configs (approved), then wait for the approval of a deploy. */
async function archivingServer() {
  const configDir = tempDir();
  for (const name of ['a.json', 'b.json']) writeFileSync(join(configDir, name), '{}');
  mkdirSync(join(configDir, 'archive'));
  const server = await startTestServer({
    auth: { tokens: [] },
    runtime: () => ({
      planner: createScriptedPlanner([
        { type: 'tool_calls', calls: [{ tool: 'configs.archive', args: { files: ['a.json', 'b.json'] } }] },
        { type: 'tool_calls', calls: [{ tool: 'ops.deploy', args: {} }] },
        { type: 'final', answer: 'deployed' },
      ]),
      tools: [configsArchive, deploy],
    }),
  });
  const call = apiClient(server.url);
  /** A run up to the deploy's approval, its archive done. */
  const archived = async () => {
    const created = await call('POST', '/v1/runs', { input: 'clean up, then deploy', context: { configDir } });
    const id = created.body.id as string;
    const first = await pollRun(call, id, (r) => r.status === 'waiting_human', scaled(30_000));
    await call('POST', `/v1/runs/${id}/approvals/${first.pending_approval_id as string}`, { decision: 'approve' });
    await pollRun(
      call,
      id,
      (r) => r.status === 'waiting_human' && r.pending_approval_id !== first.pending_approval_id,
      scaled(30_000),
    );
    expect(existsSync(join(configDir, 'archive', 'a.json'))).toBe(true);
    expect(existsSync(join(configDir, 'a.json'))).toBe(false);
    return (await call('GET', `/v1/runs/${id}`)).body as Json;
  };
  const restoredAll = () =>
    ['a.json', 'b.json'].every((f) => existsSync(join(configDir, f)) && !existsSync(join(configDir, 'archive', f)));
  return { server, call, archived, restoredAll };
}

describe('compensation over the API and the CLI', () => {
  it('baton cancel --compensate in process (--db) drives the compensation to its end and lists it', async () => {
    const dir = tempDir();
    const env = { SHOP_JOURNAL: join(dir, 'shop.jsonl') };
    const db = join(dir, 'baton.db');
    const agent = ['--agent', 'test/cli/fixtures/shop-agent.ts', '--db', db];
    const started = await baton(['run', 'handle orders', '--json', ...agent], { env, timeoutMs: scaled(60_000) });
    expect(started.code).toBe(3);
    const runId = (JSON.parse(started.stdout.trim().split('\n').at(-1)!) as Json).run.id as string;
    const text = await baton(['cancel', runId, '--compensate', ...agent], { env, timeoutMs: scaled(60_000) });
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^Compensation: done; 3 undone: shop\.charge \(\S+\), shop\.archive \(\S+\), shop\.charge \(\S+\)$/m,
    );
    expect(text.stdout).toMatch(/^ {2}left as it is \(no compensator\): shop\.notify \(\S+\)$/m);
    expect(readShop(env.SHOP_JOURNAL).filter((l) => l.kind === 'refund' || l.kind === 'restore')).toHaveLength(3);
  });

  it('baton cancel --compensate --url undoes the archive and prints what was undone (JSON and text)', async () => {
    const { server, call, archived, restoredAll } = await archivingServer();
    const run = await archived();
    const json = await baton([
      'cancel',
      run.id,
      '--compensate',
      '--reason',
      'wrong files',
      '--json',
      '--url',
      server.url,
    ]);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const ended = JSON.parse(json.stdout) as Json;
    expect(ended).toMatchObject({
      status: 'failed',
      stop_reason: 'cancelled',
      compensation: {
        reason: 'cancelled',
        status: 'done',
        compensated: [{ tool: 'configs.archive', tool_call_id: expect.any(String) }],
        failed: [],
        not_compensated: [],
      },
    });
    expect(restoredAll()).toBe(true);
    // The ledger over HTTP: the compensation's row, pointing at the archive call.
    const ledger = (await call('GET', `/v1/runs/${run.id}/tool-calls`)).body.tool_calls as Json[];
    const archive = ledger.find((c) => c.tool === 'configs.archive' && c.compensates === null);
    const undo = ledger.find((c) => c.compensates === archive.id);
    expect(undo).toMatchObject({
      status: 'succeeded',
      effect: 'idempotent',
      result: { content: { restored: ['a.json', 'b.json'] } },
    });
    // The same run, as text: the report in plain lines.
    const again = await archived();
    const text = await baton(['cancel', again.id, '--compensate', '--url', server.url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Compensation: done; 1 undone: configs\.archive \(\S+\)$/m);
    expect(text.stdout).toMatch(/^Run \S+ failed \(cancelled\)$/m);
    expect(restoredAll()).toBe(true);
  });

  it('a rejection with terminate and compensate over HTTP, and bodies that are refused', async () => {
    const { call, archived, restoredAll } = await archivingServer();
    const run = await archived();
    const path = `/v1/runs/${run.id}/approvals/${run.pending_approval_id as string}`;
    const refused = await call('POST', path, { decision: 'reject', compensate: true });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'input.invalid' });
    expect((await call('POST', `/v1/runs/${run.id}/cancel`, { compensate: 'yes' })).status).toBe(400);
    expect((await call('GET', `/v1/runs/${run.id}`)).body.status).toBe('waiting_human');

    const decided = await call('POST', path, { decision: 'reject', terminate: true, compensate: true, reason: 'no' });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: 'rejected', resolution: 'compensate' });
    const ended = await pollRun(call, run.id, (r) => r.status === 'failed', scaled(30_000));
    expect(ended).toMatchObject({ stop_reason: 'rejected', compensation: { reason: 'rejected', status: 'done' } });
    expect(restoredAll()).toBe(true);
    // The run's events, as SSE and the log send them: compensation events, then the last state with the report.
    const events = (await call('GET', `/v1/runs/${run.id}/export`)).body.events as Json[];
    const types = events.map((e) => e.type as string);
    expect(types.filter((t) => t === 'compensation')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'state', data: { to: 'failed', compensation: { status: 'done' } } });
    // A second decision on the same approval answers 409 and undoes nothing again.
    expect((await call('POST', path, { decision: 'reject', terminate: true, compensate: true })).status).toBe(409);
  });
});
