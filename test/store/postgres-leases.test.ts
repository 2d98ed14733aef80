/**
 * Leases and fencing on PostgreSQL, through the store the runtime uses: concurrent claims never
 * take the same run, a lapsed lease is claimed by another worker with a higher epoch (by the
 * database's clock), and the first worker's late write (snapshot and event, one fenced unit)
 * changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/pg-store.js';
import type { Claim, Store } from '../../src/store/index.js';
import { freshDatabase, hasPostgres } from '../helpers/pg.js';
import { runProgress, runRow } from '../helpers/run-row.js';
import { scaled } from '../helpers/limits.js';

async function withRuns(count: number): Promise<Store> {
  const store = await createPostgresStore(await freshDatabase());
  await store.write((w) => {
    for (let i = 0; i < count; i += 1) {
      // A session has one active run at most: each run its own.
      w.ensureSession(`s${i}`, 1);
      // Finished runs do not need driving; only in-flight ones are claimed.
      w.insertRun(
        runRow(`r${String(i).padStart(3, '0')}`, `s${i}`, {
          status: i === 0 ? 'succeeded' : 'planning',
          owner: null,
          lease_until: null,
          created_at: i,
          updated_at: i,
        }),
      );
    }
  });
  return store;
}

describe.skipIf(!hasPostgres())('leases and fencing on PostgreSQL', () => {
  it('never gives the same run to two workers claiming at once', async () => {
    const store = await withRuns(41);
    try {
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((worker) => store.claimRuns(worker, 60_000, 15)));
      const ids = claims.flat().map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `r${String(i + 1).padStart(3, '0')}`));
      expect(claims.flat().every((c) => c.epoch === 1)).toBe(true);
      // Nothing is left to claim while the leases hold.
      expect(await store.claimRuns('e', 60_000, 10)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("lets another worker claim a lapsed lease and fences the first worker's late write", async () => {
    const store = await withRuns(2);
    try {
      const [a] = await store.claimRuns('worker-a', 50, 1);
      expect(a).toEqual({ id: 'r001', epoch: 1 });
      const write = (claim: Claim, owner: string, seq: number) =>
        store
          .write(
            (w) => {
              w.saveProgress(runProgress(claim.id, seq - 1, { snapshot: `{"by":"${owner}"}`, updated_at: seq }));
              w.insertEvent({ run_id: claim.id, seq, type: 'state', data: `{"by":"${owner}"}`, created_at: seq });
            },
            { runId: claim.id, owner, epoch: claim.epoch },
          )
          .then(
            () => true,
            (error: unknown) => {
              if ((error as { code?: string }).code !== 'run.version_conflict') throw error;
              return false;
            },
          );
      expect(await write(a!, 'worker-a', 1)).toBe(true);
      // A stalls past its lease (by the database's clock); B claims the run.
      let b: Claim | undefined;
      for (const started = Date.now(); !b && Date.now() - started < scaled(30_000);) {
        [b] = await store.claimRuns('worker-b', 60_000, 1);
        if (!b) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(b).toEqual({ id: 'r001', epoch: 2 });
      // A's late write changes nothing, not even the event log; A learns it lost the run.
      expect(await write(a!, 'worker-a', 2)).toBe(false);
      expect(await store.renewLeases('worker-a', 60_000, [a!.id])).toEqual([]);
      expect(await write(b!, 'worker-b', 2)).toBe(true);
      expect((await store.renewLeases('worker-b', 60_000, [b!.id])).map((r) => r.id)).toEqual(['r001']);
      const events = (await store.listEvents('r001')).map((e) => ({ seq: e.seq, data: e.data }));
      expect(events).toEqual([
        { seq: 1, data: '{"by":"worker-a"}' },
        { seq: 2, data: '{"by":"worker-b"}' },
      ]);
      expect(await store.getRun('r001')).toMatchObject({
        owner: 'worker-b',
        epoch: 2,
        version: 2,
        snapshot: '{"by":"worker-b"}',
      });
    } finally {
      await store.close();
    }
  });
});
