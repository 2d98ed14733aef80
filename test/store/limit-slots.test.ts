/**
 * The store's per-key limits on both dialects: slots taken by compare-and-set up to the limit,
 * given back by their holder only, lapsing when their owner stops renewing them; a rate's turns
 * that lapse an interval after they were taken; a 429's back-off, doubled with each strike in a
 * row when the service gave no hint, seen by every taker.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { ALL_DIALECTS, freshStoreOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { waitUntil } from '../helpers/wait-until.js';

describe.each(ALL_DIALECTS)('limit slots (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  async function withStore(use: (store: Store) => Promise<void>): Promise<void> {
    const store = await freshStoreOf(dialect);
    try {
      await use(store);
    } finally {
      await store.close();
    }
  }

  it('hands out at most `limit` slots of a key, each to one holder, and takes a slot back from its holder only', () =>
    withStore(async (store) => {
      const taken = await Promise.all(
        ['a', 'b', 'c', 'd', 'e'].map((holder) => store.takeSlot('tool:t:k', 3, holder, 'owner-1', 60_000)),
      );
      const got = taken.filter((t) => t.ok);
      expect(got).toHaveLength(3);
      expect(new Set(got.map((t) => (t.ok ? t.slot : -1)))).toEqual(new Set([0, 1, 2]));
      const refused = taken.find((t) => !t.ok)!;
      expect(refused).toMatchObject({ ok: false, why: 'concurrency' });
      // Another key is not counted with it.
      expect(await store.takeSlot('tool:t:other', 3, 'z', 'owner-1', 60_000)).toEqual({ ok: true, slot: 0 });
      const held = await store.heldSlots('tool:t:k');
      expect(held).toHaveLength(3);
      // Given back by someone else: nothing happens.
      await store.releaseSlot('tool:t:k', held[0]!.slot, 'not-the-holder');
      expect(await store.heldSlots('tool:t:k')).toHaveLength(3);
      await store.releaseSlot('tool:t:k', held[0]!.slot, held[0]!.holder);
      expect(await store.heldSlots('tool:t:k')).toHaveLength(2);
      expect(await store.takeSlot('tool:t:k', 3, 'f', 'owner-2', 60_000)).toEqual({ ok: true, slot: held[0]!.slot });
      // An owner that goes gives back all of its slots.
      await store.releaseSlotsOf('owner-1');
      expect((await store.heldSlots('tool:t:k')).map((s) => s.holder)).toEqual(['f']);
    }));

  it('frees a slot whose owner stopped renewing it, and keeps one that is renewed', () =>
    withStore(async (store) => {
      expect((await store.takeSlot('k', 1, 'lapsing', 'gone', 300)).ok).toBe(true);
      expect((await store.takeSlot('k2', 1, 'renewed', 'alive', 300)).ok).toBe(true);
      // Its owner's heartbeat: renewed once, for long.
      await store.renewSlots('alive', 60_000);
      await waitUntil(async () => (await store.takeSlot('k', 1, 'next', 'other', 300)).ok, 'the lapsed slot taken');
      expect((await store.heldSlots('k')).map((s) => s.holder)).toEqual(['next']);
      expect(await store.takeSlot('k2', 1, 'thief', 'other', 300)).toMatchObject({ ok: false, why: 'concurrency' });
    }));

  it('gives a rate at most `limit` turns in any window of its interval', () =>
    withStore(async (store) => {
      expect((await store.takeRate('r', 2, 60_000, 'a')).ok).toBe(true);
      expect((await store.takeRate('r', 2, 60_000, 'b')).ok).toBe(true);
      const third = await store.takeRate('r', 2, 60_000, 'c');
      expect(third).toMatchObject({ ok: false, why: 'rate' });
      expect(third.ok ? 0 : third.waitMs).toBeGreaterThan(50_000);
      expect(third.ok ? 0 : third.waitMs).toBeLessThanOrEqual(60_001);
      // Turns are not renewed by anyone's heartbeat.
      await store.renewSlots('', 600_000);
      await store.renewSlots('owner', 600_000);
      expect((await store.takeRate('short', 1, 200, 'a')).ok).toBe(true);
      await waitUntil(async () => (await store.takeRate('short', 1, 200, 'b')).ok, 'a turn once the first lapsed');
    }));

  it('backs a key off for every taker: the hint, else a second doubled with each strike in a row', () =>
    withStore(async (store) => {
      expect(await store.backOffKey('tool:t:k', 400)).toBe(400);
      const slot = await store.takeSlot('tool:t:k', 5, 'a', 'o', 60_000);
      expect(slot).toMatchObject({ ok: false, why: 'backoff' });
      expect(slot.ok ? 0 : slot.waitMs).toBeGreaterThan(0);
      expect(slot.ok ? 0 : slot.waitMs).toBeLessThanOrEqual(400);
      expect(await store.takeRate('tool:t:k', 5, 1_000, 'a')).toMatchObject({ ok: false, why: 'backoff' });
      // No hint: 1 s after the first strike in a row (the hinted one counted), then 2 s, 4 s.
      expect(await store.backOffKey('x')).toBe(1_000);
      expect(await store.backOffKey('x')).toBe(2_000);
      expect(await store.backOffKey('x')).toBe(4_000);
      await store.clearStrikes('x');
      expect(await store.backOffKey('x')).toBe(1_000);
      // A shorter back-off does not shorten a longer one already set.
      await store.backOffKey('y', 60_000);
      await store.backOffKey('y', 10);
      const y = await store.takeSlot('y', 1, 'a', 'o', 1_000);
      expect(y.ok ? 0 : y.waitMs).toBeGreaterThan(50_000);
    }));
});
