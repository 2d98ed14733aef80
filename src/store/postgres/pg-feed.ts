/**
 * The PostgreSQL store's feed and shared secrets. Units commit concurrently, so a feed row cannot
 * take its position as it is inserted (an earlier position could then commit after a later one
 * was read): a reader places the rows committed so far first, under a lock, then reads.
 */
import type pg from 'pg';
import type { FeedRow, StoreFeed } from '../store-api.js';
import { query, SQL, type PgRows } from './pg-query.js';

/** Arbitrary, fixed (next to the migration lock's): held while a reader gives feed rows their positions. */
const FEED_LOCK = 7_261_432_119;

/**
 * Gives the feed rows committed so far their positions, after the highest one, in insertion
 * order. Under the lock, and in a statement that starts once the lock is held, so each placing
 * sees every row an earlier placing did and puts the rows it finds after them: a reader that
 * saw position p can find new rows only above p. Rows still being written are invisible here
 * and get placed by a later call.
 */
const PLACE_FEED =
  `begin; select pg_advisory_xact_lock(${FEED_LOCK}); ` +
  'with unplaced as (select id, row_number() over (order by id) as n from event_feed where position is null), ' +
  'head as (select coalesce(max(position), 0) as p from event_feed) ' +
  'update event_feed f set position = head.p + unplaced.n from unplaced, head where f.id = unplaced.id; commit';

/** The feed of `Store` on `pool`. */
export function pgFeed(pool: pg.Pool, { rows, row }: PgRows): StoreFeed {
  async function placeFeed(): Promise<void> {
    const unplaced = await pool.query('select 1 from event_feed where position is null limit 1');
    if (unplaced.rowCount === 0) return;
    const client = await pool.connect();
    try {
      await client.query(PLACE_FEED);
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  return {
    async readFeed(after, limit, tenantId) {
      await placeFeed();
      if (tenantId === null) return rows<FeedRow>('readFeed', { after, limit });
      return rows<FeedRow>('readFeedOfTenant', { after, limit, tenant_id: tenantId });
    },
    async feedHead() {
      // Rows not placed yet will be placed above it: starting from it misses none of them.
      return (await row<{ position: number | null }>('feedHead', {}))?.position ?? 0;
    },
    async sharedSecret(name, candidate) {
      await query(pool, SQL.putSecret, { name, value: candidate, created_at: Date.now() });
      return (await row<{ value: string }>('getSecret', { name }))?.value ?? candidate;
    },
  };
}
