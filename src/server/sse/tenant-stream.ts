/**
 * The stream of every run a caller may see: `run.created` and `state` events, live only (no
 * `id:`, since there is no global sequence to resume from). Other tenants' events never enter
 * the caller's queue.
 */
import type { Runtime, RunEventRecord } from '../../index.js';
import { canSee, type Principal } from '../auth/principal.js';
import { httpError } from '../http-error.js';
import { toEventJson } from '../to-json.js';
import { createEventQueue } from './event-queue.js';
import type { SseWriter } from './open-sse.js';

const TYPES: ReadonlySet<string> = new Set(['run.created', 'state']);

const TENANT_CACHE = 10_000;

/** The tenant of a run, cached (a run's tenant never changes): one lookup per run per server. */
export function createTenantLookup(runtime: Runtime): (runId: string) => Promise<string | null> {
  const tenants = new Map<string, string | null>();
  return async (runId) => {
    if (tenants.has(runId)) return tenants.get(runId) ?? null;
    const tenant = (await runtime.get(runId)).tenantId;
    if (tenants.size >= TENANT_CACHE) tenants.delete(tenants.keys().next().value!);
    tenants.set(runId, tenant);
    return tenant;
  };
}

/** Subscribes to the caller's runs now; the returned pump writes them until the client leaves. */
export function prepareTenantStream(
  deps: { runtime: Runtime; tenantOf: (runId: string) => Promise<string | null>; queueLimit: number },
  principal: Principal,
): (sse: SseWriter) => Promise<void> {
  const queue = createEventQueue(deps.queueLimit);
  // Tenant lookups may read the store: they are chained, so events keep their order.
  let chain: Promise<void> = Promise.resolve();
  const unsubscribe = deps.runtime.watch((event: RunEventRecord) => {
    // The runtime publishes right after its commits: nothing here may throw into it.
    if (!TYPES.has(event.type)) return;
    if (principal.allTenants) return void queue.push(event);
    chain = chain
      .then(async () => {
        if (canSee(principal, await deps.tenantOf(event.runId))) queue.push(event);
      })
      .catch((error: unknown) => console.error('baton server: the event stream listener failed', error));
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
