import { SERVER_DEFAULTS } from '../defaults.js';

export { SERVER_DEFAULTS };

/** Tenant of every caller in dev mode (loopback, no tokens). */
export const DEV_TENANT = 'default';

/** The server's limits; each one is optional in `createServer({ limits })`. */
export interface ServerLimits {
  bodyBytes: number;
  rateBurst: number;
  ratePerSecond: number;
  sseConnectionsPerTenant: number;
  feedPollMs: number;
  heartbeatMs: number;
  ticketTtlMs: number;
  ticketRenewMs: number;
  waitTimeoutMs: number;
  closeGraceMs: number;
}

/** Limits with every default filled in. */
export function toLimits(limits: Partial<ServerLimits> = {}): ServerLimits {
  return { ...SERVER_DEFAULTS, ...limits };
}
