/** Who is calling: a tenant, roles, a name for the record, and the key of its rate limit. */
import { DEV_TENANT } from '../defaults.js';
import { ROLES, type Role, type TokenEntry } from './auth-config.js';

/** An authenticated caller. */
export interface Principal {
  /** Rate-limit key: one per token (tickets share their token's). */
  id: string;
  /** Recorded as the decider of approvals. */
  name: string;
  tenant: string;
  /** `ROLES`, and any roles of the deployment's own a wait may be escalated to. */
  roles: readonly (Role | (string & {}))[];
  /** Scopes a run started by this caller may carry (undefined: any). */
  scope?: readonly string[] | undefined;
  /** Dev mode only: sees every run of the file, whatever its tenant. */
  allTenants: boolean;
}

/** True when the caller has `role` (one of `ROLES`, or a role a wait names), or `admin`. */
export function hasRole(principal: Principal, role: Role | (string & {})): boolean {
  return principal.roles.includes(role) || principal.roles.includes('admin');
}

/** True when the caller may see a run of `tenantId`. */
export function canSee(principal: Principal, tenantId: string | null): boolean {
  return principal.allTenants || tenantId === principal.tenant;
}

/** The caller a configured token stands for. */
export function toPrincipal(entry: TokenEntry, index: number): Principal {
  return {
    id: `token-${index}`,
    name: entry.name ?? `${entry.tenant}/token-${index}`,
    tenant: entry.tenant,
    roles: entry.roles,
    scope: entry.scope,
    allTenants: false,
  };
}

/** The caller in dev mode (loopback, no tokens): every role, tenant `default`. */
export const DEV_PRINCIPAL: Principal = {
  id: 'dev',
  name: 'dev',
  tenant: DEV_TENANT,
  roles: ROLES,
  allTenants: true,
};
