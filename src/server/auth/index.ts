/**
 * Authentication and limits per caller. Invariants: every `/v1` request has a principal (a
 * token's, a ticket's, or dev mode's) before any handler runs; a ticket is accepted on SSE
 * routes only; without tokens the server answers loopback hosts only; tokens are never logged
 * or echoed.
 */
export { ROLES, loadAuthConfig, parseAuthConfig } from './auth-config.js';
export type { Role, TokenEntry, AuthConfig } from './auth-config.js';
export { isLoopback } from './loopback.js';
