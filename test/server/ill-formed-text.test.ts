import { describe, expect, it } from 'vitest';
import { apiClient, startTestServer, token } from '../helpers/server.js';

const SUBMIT = token('acme-submit');
const APPROVE = token('acme-approve');

describe('ill-formed text', () => {
  it('refuses a lone surrogate with 400 wherever text enters, the same each time, and stores a whole emoji as sent', async () => {
    const server = await startTestServer();
    const call = apiClient(server.url, SUBMIT);
    // Half an emoji, as JSON carries it: the escape of a high surrogate with no low one.
    const body = '{"input":"hello \\ud83d","options":{"idempotency_key":"k1"}}';
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await call('POST', '/v1/runs', body);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'input.invalid', details: { path: '$.input' } });
    }
    const inContext = await call('POST', '/v1/runs', '{"input":"hi","context":{"notes":["ok","\\udc00"]}}');
    expect(inContext.body.error).toMatchObject({ code: 'input.invalid', details: { path: '$.context.notes[1]' } });
    // Named as the client wrote it.
    const inSession = await call('POST', '/v1/runs', '{"input":"hi","session_id":"s\\ud800"}');
    expect(inSession.body.error).toMatchObject({ code: 'input.invalid', details: { path: '$.session_id' } });
    expect((await call('GET', '/v1/runs')).body.runs).toEqual([]);

    const whole = await call('POST', '/v1/runs?wait=true', { input: 'mail 👋', options: { idempotency_key: 'k2' } });
    expect(whole.status).toBe(201);
    expect((await call('GET', `/v1/runs/${whole.body.id}`)).body.input).toBe('mail 👋');
    const again = await call('POST', '/v1/runs', { input: 'mail 👋', options: { idempotency_key: 'k2' } });
    expect(again.body.id).toBe(whole.body.id);

    // A decision's reason is text that enters too.
    const waiting = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    const decide = apiClient(server.url, APPROVE);
    const rejected = await decide(
      'POST',
      `/v1/runs/${waiting.body.id}/approvals/${waiting.body.pending_approval_id}`,
      '{"decision":"reject","reason":"no \\ud800"}',
    );
    expect(rejected.status).toBe(400);
    expect(rejected.body.error).toMatchObject({ code: 'input.invalid', details: { path: '$.reason' } });
    expect((await call('GET', `/v1/runs/${waiting.body.id}`)).body.status).toBe('waiting_human');
  });
});
