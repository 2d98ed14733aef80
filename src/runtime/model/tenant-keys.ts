/**
 * Tenancy of client-chosen ids. Session ids and idempotency keys are stored as
 * `<tenant>:<id>`, whoever starts the run (a server for a token's tenant, a CLI or an embedding
 * service in process), so the same id means the same session everywhere, and one tenant can
 * neither join another's session nor get another's run back with its idempotency key. A run
 * without a tenant is the default tenant's, as in a server's dev mode. The API gives back the
 * client's own id.
 */

/** The tenant of runs started without one (a server in dev mode, the CLI in process). */
export const DEFAULT_TENANT = 'default';

/** The stored form of a client's id. */
export function scopeKey(tenant: string | null | undefined, id: string): string {
  return `${tenant ?? DEFAULT_TENANT}:${id}`;
}

/** The client's form of a stored id; ids stored before keys were scoped come back as they are. */
export function unscopeKey(tenant: string | null, id: string): string;
export function unscopeKey(tenant: string | null, id: string | null): string | null;
export function unscopeKey(tenant: string | null, id: string | null): string | null {
  if (id === null) return null;
  const prefix = `${tenant ?? DEFAULT_TENANT}:`;
  return id.startsWith(prefix) ? id.slice(prefix.length) : id;
}
