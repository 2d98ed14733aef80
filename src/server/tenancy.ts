/**
 * Tenancy of client-chosen ids. Session ids and idempotency keys are global in the store, so the
 * server stores them as `<tenant>:<id>`: one tenant can neither join another's session (and see
 * its history) nor get another's run back by reusing its idempotency key. Clients only ever see
 * their own ids.
 */

/** The stored form of a client's id. */
export function scopeId(tenant: string, id: string): string {
  return `${tenant}:${id}`;
}

/** The client's form of a stored id (ids of runs started outside the server are left as they are). */
export function unscopeId(tenantId: string | null, id: string): string;
export function unscopeId(tenantId: string | null, id: string | null): string | null;
export function unscopeId(tenantId: string | null, id: string | null): string | null {
  if (id === null || tenantId === null) return id;
  const prefix = `${tenantId}:`;
  return id.startsWith(prefix) ? id.slice(prefix.length) : id;
}
