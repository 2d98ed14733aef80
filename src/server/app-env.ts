/** The Hono environment of the app: what middleware leaves for the handlers. */
import type { Principal } from './auth/principal.js';

/** Variables set on each request's context. */
export interface AppEnv {
  Variables: {
    principal: Principal;
    /** When the caller came with a ticket: when that ticket's token was traded (kept by renewals). */
    ticketOrigin?: number;
  };
}
