/**
 * One MCP server connection that comes back: a client over stdio (a child process) or
 * Streamable HTTP, connected on first use and again after the server went away (the process
 * exited, the connection closed, the server forgot the session). Calls that find no server
 * report it as unavailable (nothing was sent); a call in flight when the connection is lost has
 * an unknown outcome, which the runtime resolves by the tool's effect class. A lost connection is
 * noticed when it breaks, not at the call's timeout: a stdio server's exit closes its pipe, and
 * over HTTP the response a call is waiting for (an SSE stream or a JSON body) breaks when the
 * server's socket closes, which closes the client as a stdio exit would.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolOutcomeUnknownError, ToolUnavailableError } from '../define-tool.js';
import type { McpServerSpec } from './server-spec.js';
import { neverDelivered, watchedFetch } from './watched-fetch.js';

/** What a client sends with `initialize`. */
const CLIENT_INFO = { name: 'baton', version: '0.1.0' };

/** How the server is named when it does not say, for messages. */
export function describeServer(spec: McpServerSpec): string {
  return 'url' in spec ? String(spec.url) : [spec.command, ...(spec.args ?? [])].join(' ');
}

function newTransport(spec: McpServerSpec, onBroken: (error: unknown) => void): Transport {
  if ('url' in spec) {
    return new StreamableHTTPClientTransport(new URL(spec.url), {
      ...(spec.headers ? { requestInit: { headers: spec.headers } } : {}),
      fetch: watchedFetch(onBroken),
      // Baton reconnects on the next call itself; the SDK's retry loop of the GET stream is not needed.
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
  }
  return new StdioClientTransport({
    command: spec.command,
    ...(spec.args ? { args: spec.args } : {}),
    ...(spec.env ? { env: spec.env } : {}),
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    stderr: spec.stderr ?? 'inherit',
  });
}

/**
 * The server answered that it does not know the session (it restarted): it did not run the
 * request. The spec's answer is 404; servers built on the SDK's examples (server-everything
 * among them) answer 400 "No valid session ID provided": both mean a new session is needed.
 */
export function sessionGone(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

/** A connection to one server, made on demand and remade after it is lost. */
export class McpConnection {
  private current: Promise<Client> | null = null;
  private closed = false;
  /** Clients whose connection closed: a request that was in flight on one has an unknown outcome. */
  private readonly ended = new WeakSet<Client>();
  /** How many times a connection was made (1 after the first). */
  connects = 0;

  readonly spec: McpServerSpec;
  private readonly connectTimeoutMs: number;

  constructor(spec: McpServerSpec, connectTimeoutMs: number) {
    this.spec = spec;
    this.connectTimeoutMs = connectTimeoutMs;
  }

  /** The connected client, connecting first when there is none. */
  client(): Promise<Client> {
    if (this.closed) return Promise.reject(new ToolUnavailableError('the MCP connection is closed'));
    this.current ??= this.connect();
    return this.current;
  }

  private connect(): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    let mine: Promise<Client> | null = null;
    // Only this connection is forgotten when it closes: a newer one may already be in place. The
    // SDK calls this before it fails the requests in flight, so `use` sees why they failed.
    client.onclose = () => {
      this.ended.add(client);
      if (this.current === mine) this.current = null;
    };
    // A response broken mid-way: the server is gone (or the network between), and so is the
    // session; closing the client fails every request in flight at once, as a stdio exit does.
    const onBroken = () => {
      if (!this.ended.has(client)) void client.close().catch(() => undefined);
    };
    mine = (async () => {
      try {
        await client.connect(newTransport(this.spec, onBroken), { timeout: this.connectTimeoutMs });
        this.connects += 1;
        return client;
      } catch (error) {
        if (this.current === mine) this.current = null;
        await client.close().catch(() => undefined);
        const message = error instanceof Error ? error.message : String(error);
        throw new ToolUnavailableError(`cannot connect to MCP server ${describeServer(this.spec)}: ${message}`);
      }
    })();
    return mine;
  }

  /** Forgets `client` (after the server said it lost the session), so the next call connects again. */
  async drop(client: Client): Promise<void> {
    const current = this.current ? await this.current.catch(() => null) : null;
    if (current === client) this.current = null;
    await client.close().catch(() => undefined);
  }

  /**
   * Runs `fn` on a connected client. A request that never reached a server (refused, or a
   * session the restarted server does not know) is sent once more on a new connection; if
   * that fails too, the tool is unavailable. A request whose connection closed while it was in
   * flight has an unknown outcome (`ToolOutcomeUnknownError`). Anything else is the caller's to judge.
   */
  async use<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const client = await this.client();
      try {
        return await fn(client);
      } catch (error) {
        if (this.ended.has(client) && !neverDelivered(error)) {
          const message = error instanceof Error ? error.message : String(error);
          throw new ToolOutcomeUnknownError(
            `the connection to MCP server ${describeServer(this.spec)} was lost mid-call (${message})`,
          );
        }
        if (!(sessionGone(error) || neverDelivered(error))) throw error;
        await this.drop(client);
        if (attempt >= 1) {
          const message = error instanceof Error ? error.message : String(error);
          throw new ToolUnavailableError(
            `MCP server ${describeServer(this.spec)} did not take the request: ${message}`,
          );
        }
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const current = this.current;
    this.current = null;
    const client = current ? await current.catch(() => null) : null;
    await client?.close().catch(() => undefined);
  }
}
