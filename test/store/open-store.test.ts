/**
 * `openStore` hands back a PostgreSQL store at once, before its database is open: that store is
 * not a promise, so awaiting it (or `Promise.resolve` of it) gives the store itself, whether the
 * database opens or cannot be reached.
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { freshDatabase, hasPostgres } from '../helpers/pg.js';

describe('openStore', () => {
  it('hands back a PostgreSQL store that is not thenable, even when the database cannot be reached', async () => {
    // Port 1: nothing listens there, so opening fails.
    const { store, opened } = openStore('postgres://baton:secret@127.0.0.1:1/baton');
    expect((store as unknown as { then?: unknown }).then).toBeUndefined();
    expect(await Promise.resolve(store)).toBe(store);
    // eslint-disable-next-line @typescript-eslint/await-thenable -- awaiting a store must give the store
    expect(await store).toBe(store);
    await expect(opened).rejects.toMatchObject({ failure: { code: 'store.open_failed' } });
    expect(await Promise.resolve(store)).toBe(store);
    await store.close();
  });

  it.skipIf(!hasPostgres())(
    'hands back a PostgreSQL store that is not thenable, before and after it opens',
    async () => {
      const { store, opened } = openStore(await freshDatabase());
      expect(await Promise.resolve(store)).toBe(store);
      // eslint-disable-next-line @typescript-eslint/await-thenable -- awaiting a store must give the store
      expect(await store).toBe(store);
      await opened;
      expect(await Promise.resolve(store)).toBe(store);
      // eslint-disable-next-line @typescript-eslint/await-thenable -- awaiting a store must give the store
      expect(await store).toBe(store);
      expect(await store.lastSeq('run_none')).toBe(0);
      await store.close();
    },
  );
});
