/**
 * Authentication and limits per caller. Invariants: every `/v1` request has a principal (a
 * token's, a ticket's, or dev mode's) before any handler runs; a ticket is accepted on SSE
 * routes only; without tokens the server answers loopback hosts only; tokens are never logged
 * or echoed.
 */
export { ROLES, loadAuthConfig, parseAuthConfig, authConfigSchema } from './auth-config.js';
export type { Role, TokenEntry, AuthConfig } from './auth-config.js';
export { authenticate, isStreamPath } from './authenticate.js';
export { hasRole, canSee, DEV_PRINCIPAL, type Principal } from './principal.js';
export { createTickets, type Tickets } from './tickets.js';
export { createRateLimiter, type RateLimiter } from './rate-limit.js';
export { isLoopback } from './loopback.js';
