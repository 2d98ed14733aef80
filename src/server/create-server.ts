/** `createServer`: the HTTP API over a runtime, and `listen`, which refuses a public address without tokens. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { BatonError, createFailure } from '../failure.js';
import type { Runtime } from '../index.js';
import type { AppEnv } from './app-env.js';
import type { AuthConfig } from './auth/auth-config.js';
import { isLoopback } from './auth/loopback.js';
import { createRateLimiter } from './auth/rate-limit.js';
import { createTickets } from './auth/tickets.js';
import { createApp } from './create-app.js';
import { toLimits, type ServerLimits } from './defaults.js';
import { createStreamSlots } from './sse/stream-slots.js';

/** The name of the ticket key in the database (`runtime.sharedSecret`). */
const TICKET_SECRET = 'sse-tickets';

/** How a server is created. */
export interface ServerOptions {
  /** The runtime it serves; the caller opens it and closes it (after the server). */
  runtime: Runtime;
  /** Tokens (none: dev mode, loopback only). See `loadAuthConfig`. */
  auth: AuthConfig;
  limits?: Partial<ServerLimits>;
  /** Unexpected errors (their message is not sent to clients); default `console.error`. */
  onError?: (error: unknown) => void;
}

/** A listening server. */
export interface Listening {
  url: string;
  /** Ends open event streams (each gets an `event: error` frame), answers waiting requests, stops listening. */
  close(): Promise<void>;
}

/**
 * Creates the HTTP API of a runtime: `app` for `app.request()` or another Node server, and
 * `listen` for its own.
 * @example
 * const runtime = createRuntime({ database: './baton.db', planner, tools });
 * const server = createServer({ runtime, auth: loadAuthConfig() });
 * const { url, close } = await server.listen({ host: '127.0.0.1', port: 7420 });
 */
export function createServer(options: ServerOptions): {
  app: Hono<AppEnv>;
  listen: (at?: { host?: string; port?: number }) => Promise<Listening>;
} {
  const limits = toLimits(options.limits);
  const closing = new AbortController();
  const slots = createStreamSlots(limits.sseConnectionsPerTenant);
  const app = createApp({
    runtime: options.runtime,
    auth: options.auth,
    limits,
    slots,
    // A configured key, or the one the database keeps for every server on it.
    tickets: createTickets({
      secret: options.auth.ticketSecret ?? (() => options.runtime.sharedSecret(TICKET_SECRET)),
      ttlMs: limits.ticketTtlMs,
      renewMs: limits.ticketRenewMs,
    }),
    limiter: createRateLimiter({ burst: limits.rateBurst, perSecond: limits.ratePerSecond }),
    closing: closing.signal,
    onError: options.onError ?? ((error) => console.error('baton server:', error)),
  });

  async function listen(at: { host?: string; port?: number } = {}): Promise<Listening> {
    const host = at.host ?? '127.0.0.1';
    if (options.auth.tokens.length === 0 && !isLoopback(host)) {
      throw new BatonError(
        createFailure(
          'input.invalid',
          `Refusing to listen on '${host}' without tokens: anyone who can reach it could start and approve runs. ` +
            'Configure tokens (baton serve --tokens <file>, or BATON_TOKENS / BATON_TOKENS_FILE) or listen on 127.0.0.1.',
          { details: { host } },
        ),
      );
    }
    // Requests being answered; a streamed body is counted by its stream slot instead.
    let inflight = 0;
    const server = createAdaptorServer({
      fetch: async (request, env) => {
        inflight += 1;
        try {
          return await app.fetch(request, env);
        } finally {
          inflight -= 1;
        }
      },
      hostname: host,
    });
    const port = at.port ?? 7420;
    await new Promise<void>((resolve, reject) => {
      const refused = (error: Error) => reject(listenFailure(error, host, port));
      server.once('error', refused);
      server.listen(port, host, () => {
        server.off('error', refused);
        resolve();
      });
    });
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
    let closed: Promise<void> | undefined;
    return {
      url,
      close() {
        closed ??= new Promise<void>((resolve) => {
          closing.abort();
          slots.closeAll();
          const http = server as Server;
          // Streams and waits end at once; once nothing is being answered, the connections left
          // are idle ones (or ones a client opened and never used) and go. After the grace,
          // whatever still holds a connection is dropped.
          const idle = setInterval(() => {
            if (inflight === 0 && slots.count() === 0) http.closeAllConnections();
            else http.closeIdleConnections();
          }, 10);
          const grace = setTimeout(() => http.closeAllConnections(), limits.closeGraceMs);
          http.close(() => {
            clearInterval(idle);
            clearTimeout(grace);
            resolve();
          });
          http.closeIdleConnections();
        });
        return closed;
      },
    };
  }

  return { app, listen };
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is in use (by another server, or another baton serve)',
  EACCES: 'this process may not use that port (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine',
};

/** Why `listen` failed, as a `server.listen_failed` failure naming the address and the cause. */
function listenFailure(error: Error, host: string, port: number): Error {
  const cause = (error as NodeJS.ErrnoException).code;
  const why = (cause && LISTEN_ERRORS[cause]) ?? error.message;
  return new BatonError(
    createFailure('server.listen_failed', `Cannot listen on ${host}:${port}: ${why}`, {
      details: { host, port, cause: cause ?? null },
    }),
  );
}

/** A server made by `createServer`. */
export type BatonServer = ReturnType<typeof createServer>;
