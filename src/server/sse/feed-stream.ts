/**
 * The stream of every run a caller may see: the `run.created` and `state` events of the feed,
 * each with `id:` its position, which is in commit order across runs and processes. It opens
 * with a `cursor` frame (`id:` the position it starts after), so even a client that has seen no
 * event yet reconnects with a `Last-Event-ID`; a reconnect replays exactly what came after it.
 * Frames are read from the database, never from memory: the runtime's `watch` only wakes the
 * reader, and a timer reads what no notification announced (another process on a SQLite file).
 * Other tenants' events are filtered out by the read itself.
 */
import type { Runtime } from '../../index.js';
import type { Principal } from '../auth/principal.js';
import { toEventJson } from '../to-json.js';
import type { SseWriter } from './open-sse.js';

const TYPES: ReadonlySet<string> = new Set(['run.created', 'state']);

/** Feed events read at a time: a slow client is sent from the database at its own pace. */
const PAGE = 500;

/**
 * Subscribes to wake-ups now (so nothing committed from here on is waited for in vain); the
 * returned pump starts after `after` (or at the feed's head) and writes until the client leaves.
 */
export function prepareFeedStream(
  deps: { runtime: Runtime; pollMs: number },
  principal: Principal,
  after: number | undefined,
): (sse: SseWriter) => Promise<void> {
  const { runtime } = deps;
  const tenant = principal.allTenants ? {} : { tenantId: principal.tenant };
  let woken = false;
  let wake: (() => void) | undefined;
  const unsubscribe = runtime.watch((event) => {
    // Called right after the runtime's commits: it only flags, and never throws.
    if (!TYPES.has(event.type)) return;
    woken = true;
    wake?.();
  });
  return async (sse) => {
    const stop = () => wake?.();
    sse.signal.addEventListener('abort', stop, { once: true });
    try {
      const head = await runtime.feedHead();
      // A cursor beyond the head is not this database's (it was reset, say): start at its head.
      let last = after === undefined ? head : Math.min(after, head);
      await sse.frame({ event: 'cursor', data: { position: last }, id: last });
      while (!sse.signal.aborted) {
        woken = false;
        const page = await runtime.readFeed({ after: last, limit: PAGE, ...tenant });
        for (const event of page) {
          if (sse.signal.aborted) return;
          const { position, ...record } = event;
          await sse.frame({ event: event.type, data: toEventJson(record), id: position });
          last = position;
        }
        if (page.length === PAGE || woken) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deps.pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
          if (sse.signal.aborted) wake();
        });
        wake = undefined;
      }
    } finally {
      sse.signal.removeEventListener('abort', stop);
      unsubscribe();
    }
  };
}
