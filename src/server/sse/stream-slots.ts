/** The cap on open SSE connections per tenant, and the set of open streams the server ends on close. */
import { httpError } from '../http-error.js';

/** Counts streams per tenant; `acquire` answers 429 `stream.limit` over the cap. */
export function createStreamSlots(perTenant: number) {
  const counts = new Map<string, number>();
  const closers = new Set<() => void>();
  return {
    /** Takes a slot for `tenant`; the returned function gives it back (once). */
    acquire(tenant: string): () => void {
      const open = counts.get(tenant) ?? 0;
      if (open >= perTenant) {
        throw httpError('stream.limit', `Tenant '${tenant}' already has ${open} open event streams (the limit)`, {
          details: { limit: perTenant },
          headers: { 'Retry-After': '5' },
        });
      }
      counts.set(tenant, open + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (counts.get(tenant) ?? 1) - 1;
        if (left === 0) counts.delete(tenant);
        else counts.set(tenant, left);
      };
    },
    /** Registers how to end an open stream when the server closes; returns the unregister function. */
    track(close: () => void): () => void {
      closers.add(close);
      return () => closers.delete(close);
    },
    /** Ends every open stream (each writes its `event: error` frame). */
    closeAll(): void {
      for (const close of [...closers]) close();
    },
    /** Open streams of a tenant (for tests and health). */
    count(tenant?: string): number {
      if (tenant !== undefined) return counts.get(tenant) ?? 0;
      let total = 0;
      for (const n of counts.values()) total += n;
      return total;
    },
  };
}

export type StreamSlots = ReturnType<typeof createStreamSlots>;
