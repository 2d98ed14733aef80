/**
 * The store's contract, the same on SQLite and PostgreSQL: units of work commit whole or not at
 * all, compare-and-set writes lose cleanly, unique indexes hold, leases are exclusive and carry
 * an epoch, and every read pages and orders the same way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isUniqueViolation, type Store, type UnitWriter } from '../../src/store/index.js';
import { ALL_DIALECTS, DIALECTS, freshStoreOf, skipUnlessAvailable, type DialectName } from '../helpers/dialects.js';
import { runProgress, runRow } from '../helpers/run-row.js';

const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

async function storeWithRun(dialect: DialectName, id = 'r1', fields = {}) {
  const store = await freshStoreOf(dialect);
  open.push(store);
  await store.write((w) => {
    w.ensureSession(`s_${id}`, 1);
    w.insertRun(runRow(id, `s_${id}`, { status: 'planning', owner: 'a', ...fields }));
  });
  return store;
}

const event = (runId: string, seq: number) => ({
  run_id: runId,
  seq,
  type: 'state' as const,
  data: '{}',
  created_at: seq,
});

/** The `started` ledger row of call `id` (`r1.s0.c<n>`) of run r1. */
const startedCall = (id: string, toolVersion: string | null) => ({
  id,
  run_id: 'r1',
  step_index: 0,
  call_index: Number(id.at(-1)),
  tool: 't',
  tool_version: toolVersion,
  effect: 'unsafe' as const,
  args: '{}',
  args_hash: 'h',
  status: 'started' as const,
  result: null,
  attempts: 1,
  started_at: 1,
  finished_at: null,
  deadline_at: 2,
  edited: null,
  copied_from: null,
  idempotency_key: null,
  child_run_id: null,
  handle: null,
});

const progress = (id: string, expected: number) =>
  runProgress(id, expected, {
    snapshot: `{"v":${expected + 1}}`,
    step_index: 1,
    llm_calls: 1,
    tokens: 10,
    cost_usd: 0.5,
    updated_at: 5,
  });

describe.each(ALL_DIALECTS)('the store on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('commits a unit whole, and a unit whose compare-and-set lost writes nothing', async () => {
    const store = await storeWithRun(dialect);
    await store.write((w) => {
      w.saveProgress(progress('r1', 0));
      w.insertEvent(event('r1', 1));
    });
    expect(await store.getRun('r1')).toMatchObject({ version: 1, status: 'executing', tokens: 10, cost_usd: 0.5 });
    // Stale: expects version 0 again.
    const stale = store.write((w: UnitWriter) => {
      w.insertEvent(event('r1', 2));
      w.saveProgress(progress('r1', 0));
    });
    await expect(stale).rejects.toMatchObject({ code: 'run.version_conflict' });
    expect((await store.listEvents('r1')).map((e) => e.seq)).toEqual([1]);
    expect(await store.lastSeq('r1')).toBe(1);
    // Other units go on.
    await store.write((w) => w.insertEvent(event('r1', 2)));
    expect(await store.lastSeq('r1')).toBe(2);
  });

  it("writes a held run's unit whole under its claim, and nothing of it when its compare-and-set lost", async () => {
    const store = await storeWithRun(dialect, 'r1', { owner: null, lease_until: null });
    const epoch = (await store.claimRun('r1', 'a', 60_000, () => false))!;
    const fence = { runId: 'r1', owner: 'a', epoch };
    const call = startedCall('r1.s0.c0', null);
    const blob = {
      sha256: 'f00d',
      size: 2,
      media_type: 'application/octet-stream',
      content: Buffer.from([0, 255]),
      created_at: 1,
    };
    await store.write((w) => {
      w.putToolCall(call);
      w.putToolCall({ ...call, status: 'succeeded', result: '"ok"', finished_at: 3 });
      w.insertEvent(event('r1', 1));
      w.insertEvent(event('r1', 2));
      w.putArtifact(blob, 'r1');
      w.saveProgress(progress('r1', 0));
    }, fence);
    expect((await store.listEvents('r1')).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.getToolCall('r1.s0.c0')).toMatchObject({ status: 'succeeded', result: '"ok"', finished_at: 3 });
    expect(Buffer.from((await store.getArtifact('f00d'))!.content)).toEqual(Buffer.from([0, 255]));
    expect(await store.getRun('r1')).toMatchObject({ version: 1, status: 'executing' });
    const stale = store.write((w) => {
      w.insertEvent(event('r1', 3));
      w.putToolCall({ ...call, status: 'failed' });
      w.saveProgress(progress('r1', 0));
    }, fence);
    await expect(stale).rejects.toMatchObject({ code: 'run.version_conflict' });
    expect(await store.lastSeq('r1')).toBe(2);
    expect((await store.getToolCall('r1.s0.c0'))!.status).toBe('succeeded');
  });

  it('fences a unit without a snapshot too: a runtime that lost its lease cannot record a started call', async () => {
    const store = await storeWithRun(dialect, 'r1', { owner: null, lease_until: null });
    const first = (await store.claimRun('r1', 'a', 60_000, () => false))!;
    const call = (id: string) => startedCall(id, '1');
    await store.write((w) => w.putToolCall(call('r1.s0.c0')), { runId: 'r1', owner: 'a', epoch: first });
    // A's owner is known dead: B takes the run over (a new epoch) while A still thinks it holds it.
    const second = (await store.claimRun('r1', 'b', 60_000, (owner) => owner === 'a'))!;
    expect(second).toBe(first + 1);
    // A's next unit (a started row and its action event, no snapshot) changes nothing.
    const late = store.write(
      (w) => {
        w.putToolCall(call('r1.s0.c1'));
        w.insertEvent(event('r1', 1));
      },
      { runId: 'r1', owner: 'a', epoch: first },
    );
    await expect(late).rejects.toMatchObject({ code: 'run.version_conflict', failure: { details: { epoch: first } } });
    expect(await store.getToolCall('r1.s0.c1')).toBeUndefined();
    expect(await store.lastSeq('r1')).toBe(0);
    // B's unit, under its own claim, commits.
    await store.write((w) => w.putToolCall(call('r1.s0.c1')), { runId: 'r1', owner: 'b', epoch: second });
    expect(await store.getToolCall('r1.s0.c1')).toMatchObject({ status: 'started' });
  });

  it('decides an approval once; a second decision fails its unit', async () => {
    const store = await storeWithRun(dialect);
    const approval = {
      id: 'a1',
      run_id: 'r1',
      step_index: 0,
      kind: 'tool' as const,
      tool_call_ids: '["c1"]',
      args_hash: 'h',
      status: 'pending' as const,
      resolution: null,
      decided_by: null,
      reason: null,
      created_at: 1,
      decided_at: null,
      votes: '[]',
      request: null,
      role: 'approve',
      expires_at: null,
      expiry: null,
      answer: null,
    };
    await store.write((w) => w.insertApproval(approval));
    await store.write((w) => w.setApprovalVotes('a1', '[{"by":"x"}]'));
    const decide = (by: string) =>
      store.write((w) => {
        w.decideApproval('a1', {
          status: 'approved',
          resolution: null,
          by,
          reason: null,
          at: 2,
          answer: null,
          args_hash: 'h',
        });
        w.insertEvent(event('r1', by === 'alice' ? 1 : 2));
      });
    await decide('alice');
    await expect(decide('bob')).rejects.toMatchObject({ code: 'approval.already_decided' });
    expect(await store.getApproval('a1')).toMatchObject({
      status: 'approved',
      decided_by: 'alice',
      votes: '[{"by":"x"}]',
    });
    expect((await store.listEvents('r1')).map((e) => e.seq)).toEqual([1]);
    expect((await store.listApprovals('r1')).map((a) => a.id)).toEqual(['a1']);
  });

  it('refuses a taken idempotency key and a second active run of a session by their unique indexes', async () => {
    const store = await storeWithRun(dialect, 'r1', { idempotency_key: 'k' });
    const insert = (id: string, session: string, fields = {}) =>
      store.write((w) => {
        w.ensureSession(session, 1);
        w.insertRun(runRow(id, session, fields));
      });
    const key = await insert('r2', 's_other', { idempotency_key: 'k' }).catch((error: unknown) => error);
    expect(isUniqueViolation(key)).toBe(true);
    const busy = await insert('r3', 's_r1').catch((error: unknown) => error);
    expect(isUniqueViolation(busy)).toBe(true);
    expect(await store.getRun('r2')).toBeUndefined();
    expect((await store.findRunByIdempotencyKey('k'))?.id).toBe('r1');
    expect((await store.activeRunOfSession('s_r1'))?.id).toBe('r1');
    // A finished run frees its session.
    await insert('r4', 's_r4', { status: 'succeeded' });
    await insert('r5', 's_r4');
    expect((await store.activeRunOfSession('s_r4'))?.id).toBe('r5');
  });

  it('gives a lease to one owner at a time, each claim with a higher epoch, and takes a lapsed one over', async () => {
    const store = await storeWithRun(dialect, 'r1', { owner: null, lease_until: null });
    const alive = () => false;
    const [a, b] = await Promise.all([
      store.claimRun('r1', 'a', 60_000, alive),
      store.claimRun('r1', 'b', 60_000, alive),
    ]);
    expect([a, b].filter((epoch) => epoch !== null)).toEqual([1]);
    const holder = a === null ? 'b' : 'a';
    const other = holder === 'a' ? 'b' : 'a';
    expect(await store.claimRun('r1', other, 60_000, alive)).toBeNull();
    // The holder renews; the other holds nothing.
    expect(await store.renewLeases(holder, 1, ['r1'])).toEqual([
      { id: 'r1', cancel_requested: null, pause_requested: null },
    ]);
    expect(await store.renewLeases(other, 60_000, ['r1'])).toEqual([]);
    // The holder's lease (renewed for 1 ms) lapses: the other claims it, at a higher epoch.
    await expect.poll(() => store.claimRun('r1', other, 60_000, alive)).toBe(2);
    expect(await store.renewLeases(holder, 60_000, ['r1'])).toEqual([]);
    // An owner known dead is taken over at once.
    expect(await store.claimRun('r1', holder, 60_000, (owner) => owner === other)).toBe(3);
  });

  it('never claims back a run its claimer holds, even with the lease lapsed: the heartbeat renews it', async () => {
    const store = await storeWithRun(dialect, 'r1', { owner: null, lease_until: null });
    const epoch = (await store.claimRun('r1', 'a', 60_000, () => false))!;
    // Its lease (renewed for 1 ms) lapses: its own claim loop leaves it, so its epoch stays.
    expect(await store.renewLeases('a', 1, ['r1'])).toEqual([
      { id: 'r1', cancel_requested: null, pause_requested: null },
    ]);
    await expect.poll(async () => (await store.getRun('r1'))!.lease_until! < Date.now()).toBe(true);
    expect(await store.claimRuns('a', 60_000, 10)).toEqual([]);
    expect(await store.getRun('r1')).toMatchObject({ owner: 'a', epoch });
    // A unit fenced on that epoch still lands, and the heartbeat takes the lease up again.
    await store.write((w) => w.insertEvent(event('r1', 1)), { runId: 'r1', owner: 'a', epoch });
    expect(await store.renewLeases('a', 60_000, ['r1'])).toEqual([
      { id: 'r1', cancel_requested: null, pause_requested: null },
    ]);
    // Another worker takes a lapsed lease over, at a higher epoch.
    await store.renewLeases('a', 1, ['r1']);
    await expect
      .poll(async () => (await store.claimRuns('b', 60_000, 10)).map((c) => [c.id, c.epoch]))
      .toEqual([['r1', epoch + 1]]);
  });

  it('claims runs in flight without a live lease for concurrent workers, never one run twice', async () => {
    const store = await storeWithRun(dialect, 'r00', { owner: null, lease_until: null, status: 'succeeded' });
    await store.write((w) => {
      for (let i = 1; i <= 30; i += 1) {
        const id = `r${String(i).padStart(2, '0')}`;
        w.ensureSession(`s${i}`, 1);
        w.insertRun(
          runRow(id, `s${i}`, {
            status: i % 3 === 0 ? 'waiting_human' : 'executing',
            owner: i === 1 ? 'someone' : null,
            lease_until: i === 1 ? Date.now() + 600_000 : null,
          }),
        );
      }
    });
    const claims = (await Promise.all(['w1', 'w2', 'w3'].map((w) => store.claimRuns(w, 60_000, 8)))).flat();
    const ids = claims.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    // In flight and free: 30 runs, less every third (waiting), less r01 (leased): 19.
    const more = await store.claimRuns('w4', 60_000, 50);
    expect([...ids, ...more.map((c) => c.id)].sort()).toHaveLength(19);
    expect(claims.every((c) => c.epoch === 1)).toBe(true);
    expect(await store.claimRuns('w5', 60_000, 50)).toEqual([]);
  });

  it("lists the owners of runs in flight and takes a dead owner's runs at once, whatever their lease", async () => {
    const store = await storeWithRun(dialect, 'r1', { owner: 'dead', lease_until: Date.now() + 600_000 });
    await store.write((w) => {
      w.ensureSession('s2', 1);
      w.insertRun(runRow('r2', 's2', { status: 'executing', owner: 'dead', lease_until: Date.now() + 600_000 }));
      w.ensureSession('s3', 1);
      w.insertRun(runRow('r3', 's3', { status: 'waiting_human', owner: 'dead', lease_until: null }));
      w.ensureSession('s4', 1);
      w.insertRun(runRow('r4', 's4', { status: 'planning', owner: 'alive', lease_until: Date.now() + 600_000 }));
    });
    expect((await store.inFlightOwners()).sort()).toEqual(['alive', 'dead']);
    const taken = await store.claimRunsOf('dead', 'me', 60_000, 10);
    expect(taken.map((c) => c.id).sort()).toEqual(['r1', 'r2']);
    expect(taken.every((c) => c.epoch === 1)).toBe(true);
    expect(await store.claimRunsOf('dead', 'other', 60_000, 10)).toEqual([]);
    expect((await store.getRun('r3'))?.owner).toBe('dead');
  });

  it('reads pages in order: runs newest first with filters and a cursor, events, waiting runs by wake-up', async () => {
    const store = await storeWithRun(dialect, 'r00', { created_at: 0 });
    await store.write((w) => {
      for (let i = 1; i <= 7; i += 1) {
        w.ensureSession(`s${i}`, 1);
        w.insertRun(
          runRow(`r0${i}`, `s${i}`, {
            created_at: i,
            status: i % 2 === 0 ? 'waiting_human' : 'succeeded',
            tenant_id: i < 4 ? 'acme' : null,
            wake_at: i % 2 === 0 ? 100 * i : null,
          }),
        );
      }
      for (let seq = 1; seq <= 5; seq += 1) w.insertEvent(event('r01', seq));
    });
    const first = await store.listRuns({ limit: 3 });
    expect(first.map((r) => r.id)).toEqual(['r07', 'r06', 'r05']);
    const next = await store.listRuns({ limit: 3, cursor: `${first[2]!.created_at}:${first[2]!.id}` });
    expect(next.map((r) => r.id)).toEqual(['r04', 'r03', 'r02']);
    expect((await store.listRuns({ status: 'waiting_human', tenantId: 'acme' })).map((r) => r.id)).toEqual(['r02']);
    expect((await store.listEvents('r01', 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
    expect((await store.dueWaitingRuns(450, null, 10)).map((r) => r.id)).toEqual(['r02', 'r04']);
    expect((await store.dueWaitingRuns(1_000, { wakeAt: 200, id: 'r02' }, 1)).map((r) => r.id)).toEqual(['r04']);
    expect(await store.nextWake(450)).toBe(600);
    expect((await store.waitingRunsPage(null, 2)).map((r) => r.id)).toEqual(['r02', 'r04']);
    expect(await store.inFlightRunIds()).toEqual(['r00']);
    expect(await store.runIdsWithStatusNotIn(['pending', 'planning', 'executing', 'waiting_human'])).toEqual(
      expect.arrayContaining(['r01', 'r03', 'r05', 'r07']),
    );
  });

  it('keeps artifacts once by hash and a session history in order', async () => {
    const store = await storeWithRun(dialect);
    const blob = { sha256: 'abc', size: 3, media_type: 'text/plain', content: Buffer.from('abc'), created_at: 1 };
    await store.write((w) => {
      w.putArtifact(blob, 'r1');
      w.putArtifact({ ...blob, created_at: 2 }, 'r1');
      w.insertMessage({ session_id: 's_r1', run_id: 'r1', role: 'user', content: 'hi', created_at: 1 });
      w.insertMessage({ session_id: 's_r1', run_id: 'r1', role: 'assistant', content: 'hello', created_at: 1 });
      w.setAnswer('r1', 'hello');
      w.setWakeAt('r1', 0);
    });
    const stored = await store.getArtifact('abc');
    expect(Buffer.from(stored!.content).toString()).toBe('abc');
    expect(stored!.created_at).toBe(1);
    expect((await store.listMessages('s_r1')).map((m) => m.content)).toEqual(['hi', 'hello']);
    expect(await store.getRun('r1')).toMatchObject({ answer: 'hello', wake_at: 0 });
  });

  it('keeps a cancel asked of an active run for the owner, returned with its next renewal', async () => {
    const store = await storeWithRun(dialect, 'r1', { owner: 'a', lease_until: Date.now() + 60_000 });
    expect(await store.requestCancel('r1', '{"reason":"stop"}')).toBe(true);
    expect(await store.renewLeases('a', 60_000, ['r1'])).toEqual([
      { id: 'r1', cancel_requested: '{"reason":"stop"}', pause_requested: null },
    ]);
    await store.write((w) => w.saveProgress({ ...progress('r1', 0), status: 'failed' }));
    expect(await store.requestCancel('r1', '{"reason":"again"}')).toBe(false);
  });
});

describe.skipIf(!DIALECTS.includes('postgres'))('fencing on PostgreSQL', () => {
  it('writes nothing of a unit whose owner lost the run to a later claim', async () => {
    const store = await storeWithRun('postgres', 'r1', { owner: null, lease_until: null });
    const epoch = (await store.claimRun('r1', 'a', 1, () => false))!;
    await expect.poll(() => store.claimRun('r1', 'b', 60_000, () => false)).toBe(epoch + 1);
    const late = store.write(
      (w) => {
        w.insertEvent(event('r1', 1));
        w.saveProgress(progress('r1', 0));
      },
      { runId: 'r1', owner: 'a', epoch },
    );
    await expect(late).rejects.toMatchObject({ code: 'run.version_conflict' });
    expect(await store.listEvents('r1')).toEqual([]);
    expect(await store.getRun('r1')).toMatchObject({ version: 0, owner: 'b', epoch: epoch + 1 });
    // The new owner writes.
    await store.write((w) => w.insertEvent(event('r1', 1)), { runId: 'r1', owner: 'b', epoch: epoch + 1 });
    expect(await store.lastSeq('r1')).toBe(1);
  });
});
