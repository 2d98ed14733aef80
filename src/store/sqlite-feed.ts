/**
 * The SQLite store's feed and shared secrets. A file has one writer at a time, so the feed's
 * positions are given as its events are inserted (`events.position`), already in commit order.
 */
import { directWrite, type WriteFailures } from './store-errors.js';
import type { Prepared } from './sqlite-prepared.js';
import type { FeedRow, StoreFeed } from './store-api.js';

/** The feed of `Store` over the prepared statements; a refused write is noted in `failures`. */
export function sqliteFeed({ get, all, run }: Prepared, failures: WriteFailures): StoreFeed {
  return {
    async readFeed(after, limit, tenantId) {
      if (tenantId === null) return all<FeedRow>('readFeed', { after, limit });
      return all<FeedRow>('readFeedOfTenant', { after, limit, tenant_id: tenantId });
    },
    feedHead: async () => get<{ position: number | null }>('feedHead', {})?.position ?? 0,
    // Outside the commit queue, like a lease: one small write, once per process.
    sharedSecret: (name, candidate) =>
      directWrite(failures, () => {
        run('putSecret', { name, value: candidate, created_at: Date.now() });
        return get<{ value: string }>('getSecret', { name })?.value ?? candidate;
      }),
  };
}
