/**
 * A PostgreSQL database that refuses writes (made read-only, as a standby after a failover is, and
 * its connections cut): a cancel or an approval is store.write_failed naming the cause, the run
 * is as it was, and once the database takes writes again the same request succeeds.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { freshDatabase, hasPostgres } from '../helpers/pg.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempFiles } from '../helpers/temp.js';
import { createWorld, readEffects } from '../helpers/world.js';

/** Makes a database read-only (or writable again) for every new session, and ends the sessions it has. */
async function setReadOnly(url: string, on: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.BATON_TEST_PG_URL });
  await admin.connect();
  try {
    const name = new URL(url).pathname.slice(1);
    await admin.query(`alter database ${name} set default_transaction_read_only = ${on ? 'on' : 'off'}`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
  } finally {
    await admin.end();
  }
}

describe.skipIf(!hasPostgres())('writes PostgreSQL refuses', () => {
  it('are store.write_failed, never success, and leave the run as it was', async () => {
    const database = await freshDatabase();
    const { effects } = tempFiles();
    const runtime = openRuntime({
      database,
      planner: createScriptedPlanner((request) =>
        request.stepIndex === 0
          ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'archive' } }] }
          : { type: 'final', answer: 'done' },
      ),
      tools: [createWorld(effects, { risk: 'high' }).unsafe],
    });
    const run = await runtime.wait((await runtime.start({ input: 'archive it' })).id);
    expect(run.status).toBe('waiting_human');
    await setReadOnly(database, true);
    try {
      // The first request may meet a connection that was cut (a lost connection), the next the read-only database.
      for (let attempt = 0; attempt < 2; attempt += 1) {
        await expect(runtime.cancel(run.id, { reason: 'stop' })).rejects.toMatchObject({
          code: 'store.write_failed',
          failure: { details: { cause: expect.stringMatching(/^(25006|57P01|08\d{3}|connection_terminated)$/) } },
        });
      }
      await expect(runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' })).rejects.toMatchObject({
        code: 'store.write_failed',
        failure: { details: { cause: '25006' } },
      });
      expect(await runtime.get(run.id)).toMatchObject({ status: 'waiting_human' });
    } finally {
      await setReadOnly(database, false);
    }
    expect(readEffects(effects)).toEqual([]);
    await expect
      .poll(async () => (await runtime.cancel(run.id, { reason: 'stop' }).catch(() => null))?.status, {
        timeout: 30_000,
      })
      .toBe('failed');
  });
});
