/**
 * Leases and fencing on PostgreSQL, at the statement level: concurrent claims never take the
 * same run, a lapsed lease is claimed by another worker with a higher epoch, and the first
 * worker's late write (snapshot and event, one statement) changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { claimRuns, fencedWrite, renewLeases } from '../../src/store/postgres/leases.js';
import { openPostgres } from '../../src/store/postgres/open-postgres.js';
import { freshDatabase, hasPostgres } from '../helpers/pg.js';
import { runRow } from '../helpers/run-row.js';

async function withRuns(count: number) {
  const db = await openPostgres(await freshDatabase());
  for (let i = 0; i < count; i += 1) {
    // A session has one active run at most: each run its own.
    await db.kysely
      .insertInto('sessions')
      .values({ id: `s${i}`, created_at: 1, updated_at: 1 })
      .execute();
    await db.kysely
      .insertInto('runs')
      // Finished runs do not need driving; only in-flight ones are claimed.
      .values(
        runRow(`r${String(i).padStart(3, '0')}`, `s${i}`, {
          status: i === 0 ? 'succeeded' : 'planning',
          created_at: i,
          updated_at: i,
        }),
      )
      .execute();
  }
  return db;
}

describe.skipIf(!hasPostgres())('leases and fencing on PostgreSQL', () => {
  it('never gives the same run to two workers claiming at once', async () => {
    const db = await withRuns(41);
    try {
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((worker) => claimRuns(db.kysely, worker, 60_000, 15)));
      const ids = claims.flat().map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `r${String(i + 1).padStart(3, '0')}`));
      expect(claims.flat().every((c) => c.epoch === 1)).toBe(true);
      // Nothing is left to claim while the leases hold.
      expect(await claimRuns(db.kysely, 'e', 60_000, 10)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it("lets another worker claim a lapsed lease and fences the first worker's late write", async () => {
    const db = await withRuns(2);
    try {
      const [a] = await claimRuns(db.kysely, 'worker-a', 50, 1);
      expect(a).toEqual({ id: 'r001', epoch: 1 });
      const write = (claim: typeof a, owner: string, seq: number) =>
        fencedWrite(db.kysely, {
          claim: claim!,
          owner,
          expectedVersion: seq - 1,
          snapshot: `{"by":"${owner}"}`,
          status: 'executing',
          event: { seq, type: 'state', data: `{"by":"${owner}"}` },
        });
      expect(await write(a, 'worker-a', 1)).toBe(true);
      // A stalls past its lease (by the database's clock); B claims the run.
      let b: Awaited<ReturnType<typeof claimRuns>>[number] | undefined;
      for (const started = Date.now(); !b && Date.now() - started < 30_000;) {
        [b] = await claimRuns(db.kysely, 'worker-b', 60_000, 1);
        if (!b) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(b).toEqual({ id: 'r001', epoch: 2 });
      // A's late write changes nothing, not even the event log; A learns it lost the run.
      expect(await write(a, 'worker-a', 2)).toBe(false);
      expect(await renewLeases(db.kysely, 'worker-a', [a!], 60_000)).toEqual([]);
      expect(await write(b, 'worker-b', 2)).toBe(true);
      expect(await renewLeases(db.kysely, 'worker-b', [b!], 60_000)).toEqual(['r001']);
      const events = await db.kysely.selectFrom('events').select(['seq', 'data']).orderBy('seq').execute();
      expect(events).toEqual([
        { seq: 1, data: '{"by":"worker-a"}' },
        { seq: 2, data: '{"by":"worker-b"}' },
      ]);
      const run = await db.kysely.selectFrom('runs').selectAll().where('id', '=', 'r001').executeTakeFirstOrThrow();
      expect(run).toMatchObject({ owner: 'worker-b', epoch: 2, version: 2, snapshot: '{"by":"worker-b"}' });
    } finally {
      await db.close();
    }
  });
});
