/**
 * The stream of every run a caller may see: `run.created` and `state` events, live only (no
 * `id:`, since there is no global sequence to resume from). Other tenants' events never enter
 * the caller's queue.
 */
import type { RunEventRecord } from '../../index.js';
import { canSee, type Principal } from '../auth/principal.js';
import { httpError } from '../http-error.js';
import { toEventJson } from '../to-json.js';
import type { EventBus } from './event-bus.js';
import { createEventQueue } from './event-queue.js';
import type { SseWriter } from './open-sse.js';

const TYPES: ReadonlySet<string> = new Set(['run.created', 'state']);

/** Subscribes to the caller's runs now; the returned pump writes them until the client leaves. */
export function prepareTenantStream(
  deps: { bus: EventBus; queueLimit: number },
  principal: Principal,
): (sse: SseWriter) => Promise<void> {
  const { bus } = deps;
  const queue = createEventQueue(deps.queueLimit);
  const unsubscribe = bus.subscribeAll((event: RunEventRecord) => {
    if (!TYPES.has(event.type)) return;
    const tenant = bus.tenantOf(event.runId);
    if (!canSee(principal, tenant)) return;
    queue.push(event);
  });
  return async (sse) => {
    sse.signal.addEventListener('abort', () => queue.stop(), { once: true });
    try {
      for (;;) {
        const event = await queue.next();
        if (!event) {
          if (queue.overflowed) throw httpError('stream.lagging', 'The client fell too far behind the event stream');
          return;
        }
        await sse.frame({ event: event.type, data: toEventJson(event) });
      }
    } finally {
      unsubscribe();
    }
  };
}
