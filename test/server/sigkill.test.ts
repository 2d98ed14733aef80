import { describe, expect, it } from 'vitest';
import { connectSse, frameData } from '../helpers/sse-client.js';
import { apiClient, pollRun, TEST_AUTH, token, type Json } from '../helpers/server.js';
import { startServerChild } from '../helpers/server-process.js';
import { tempFiles } from '../helpers/temp.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

const ADMIN = token('acme-admin');
const APPROVE = token('acme-approve');
const ENV = { BATON_TOKENS: JSON.stringify({ tokens: TEST_AUTH.tokens }) };
const WRITES = 4;

describe('the server killed with SIGKILL', () => {
  it('resumes every run on restart, and an approval over HTTP then finishes its run exactly once', async () => {
    const files = tempFiles();
    let child = await startServerChild(files, ENV);
    let call = apiClient(child.url, ADMIN);
    const mail = (await call('POST', '/v1/runs?wait=true', { input: 'mail' })).body as Json;
    expect(mail.status).toBe('waiting_human');
    const writers = await Promise.all(
      Array.from(
        { length: 4 },
        async () => (await call('POST', '/v1/runs', { input: `write:${WRITES}:150` })).body.id as string,
      ),
    );
    // Kill while tool calls are in flight (started, no outcome yet).
    await expect
      .poll(
        async () => {
          const ledgers = await Promise.all(writers.map((id) => call('GET', `/v1/runs/${id}/tool-calls`)));
          return ledgers.filter((l) => l.body.tool_calls.some((c: { status: string }) => c.status === 'started'))
            .length;
        },
        { timeout: scaled(10_000), interval: 20 },
      )
      .toBeGreaterThanOrEqual(2);
    expect(await child.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const before = readEffects(files.effects).length;
    expect(before).toBeLessThan(writers.length * WRITES);

    child = await startServerChild(files, ENV);
    call = apiClient(child.url, ADMIN);
    for (const id of writers) {
      const run = await pollRun(call, id, (r) => r.status === 'succeeded' || r.status === 'failed', scaled(20_000));
      expect(run).toMatchObject({ status: 'succeeded', answer: `wrote ${WRITES}` });
    }
    expect((await call('GET', `/v1/runs/${mail.id}`)).body.status).toBe('waiting_human');
    const notes = readEffects(files.effects).filter((e) => e.tool === 'notes.write');
    // Idempotent by key: every step's write happened exactly once, across both processes.
    expect(notes).toHaveLength(writers.length * WRITES);
    expect(new Set(notes.map((e) => e.key)).size).toBe(writers.length * WRITES);
    expect(readEffects(files.effects).filter((e) => e.tool === 'mail.send')).toEqual([]);

    const stream = await connectSse(`${child.url}/v1/runs/${mail.id}/events`, { token: ADMIN });
    const path = `/v1/runs/${mail.id}/approvals/${mail.pending_approval_id}`;
    expect((await apiClient(child.url, APPROVE)('POST', path, { decision: 'approve' })).status).toBe(200);
    const frames = await stream.rest();
    expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1));
    expect(frameData(frames.at(-1)!)).toMatchObject({ type: 'state', data: { to: 'succeeded' } });
    expect((await apiClient(child.url, APPROVE)('POST', path, { decision: 'approve' })).status).toBe(409);
    const sent = readEffects(files.effects).filter((e) => e.tool === 'mail.send');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.pid).toBe(child.pid);
    await child.kill('SIGTERM');
  });
});
