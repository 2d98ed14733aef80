/**
 * Leases and fencing on PostgreSQL, the statements several workers share runs with. Times come
 * from the database clock, so workers' clocks do not matter. A claim takes runs that need
 * driving and are free or whose lease lapsed, skipping rows another worker is claiming, bumps
 * each run's `epoch` and sets its owner and lease; every later write of the run carries that
 * epoch and changes nothing once another worker has claimed the run since.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Milliseconds since the epoch, by the database's clock. */
const NOW_MS = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** A run a worker now holds, and the epoch its writes must carry. */
export interface Claim {
  id: string;
  epoch: number;
}

/**
 * Claims up to `limit` runs in flight (pending, planning, executing) that no one holds or whose
 * lease lapsed, in one statement: oldest lease first, rows being claimed by others skipped.
 */
export async function claimRuns(db: Kysely<Database>, owner: string, leaseMs: number, limit: number): Promise<Claim[]> {
  const { rows } = await sql<Claim>`
    update runs set owner = ${owner}, epoch = epoch + 1, lease_until = ${NOW_MS} + ${leaseMs}
    where id in (
      select id from runs
      where status in ('pending', 'planning', 'executing') and (lease_until is null or lease_until < ${NOW_MS})
      order by lease_until nulls first, id
      limit ${limit}
      for update skip locked
    )
    returning id, epoch`.execute(db);
  return rows;
}

/** Extends the leases this worker still holds at the epochs it claimed; returns the runs it still holds. */
export async function renewLeases(
  db: Kysely<Database>,
  owner: string,
  claims: readonly Claim[],
  leaseMs: number,
): Promise<string[]> {
  if (claims.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    update runs set lease_until = ${NOW_MS} + ${leaseMs}
    from (select * from json_to_recordset(${JSON.stringify(claims)}::json) as c(id text, epoch bigint)) as held
    where runs.id = held.id and runs.epoch = held.epoch and runs.owner = ${owner}
    returning runs.id`.execute(db);
  return rows.map((row) => row.id);
}

/** A transition to persist: the snapshot and counters, and the event that records it. */
export interface FencedWrite {
  claim: Claim;
  owner: string;
  expectedVersion: number;
  snapshot: string;
  status: string;
  event: { seq: number; type: string; data: string };
}

/**
 * Writes a run's snapshot and its event in one statement, fenced: nothing is written unless the
 * run is still held by `owner` at the claim's epoch and at `expectedVersion`. True if written.
 */
export async function fencedWrite(db: Kysely<Database>, write: FencedWrite): Promise<boolean> {
  const { rows } = await sql<{ seq: number }>`
    with saved as (
      update runs set snapshot = ${write.snapshot}, status = ${write.status}, version = version + 1,
        updated_at = ${NOW_MS}
      where id = ${write.claim.id} and epoch = ${write.claim.epoch} and owner = ${write.owner}
        and version = ${write.expectedVersion}
      returning id
    )
    insert into events (run_id, seq, type, data, created_at)
    select id, ${write.event.seq}, ${write.event.type}, ${write.event.data}, ${NOW_MS} from saved
    returning seq`.execute(db);
  return rows.length === 1;
}
