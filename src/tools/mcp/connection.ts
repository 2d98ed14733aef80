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
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolOutcomeUnknownError, ToolUnavailableError, type ToolContext } from '../define-tool.js';
import type { McpServerSpec } from './server-spec.js';
import { neverDelivered, watchedFetch } from './watched-fetch.js';

/** The `_meta` key of Baton's idempotency key (`MCP_META.idempotencyKey`), by which a server's question names its call. */
const IDEMPOTENCY_META = 'baton/idempotency_key';

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
  /** The calls in flight on this connection, by idempotency key: who a server's question is for. */
  private readonly inFlight = new Map<string, { ask: ToolContext['ask']; server: string }>();

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

  /**
   * Registers a call in flight as the one the server's elicitation requests are for (its
   * idempotency key, which Baton sends in the call's `_meta`); returns the function that
   * unregisters it. Without `ask` (no person can be asked) the server is answered `decline`.
   */
  asking(key: string, ask: ToolContext['ask'], server: string): () => void {
    const entry = { ask, server };
    this.inFlight.set(key, entry);
    return () => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
  }

  /**
   * A server's `elicitation/create` request during a call: the question goes to a person through
   * the call that is in flight (the one its `_meta` names by Baton's idempotency key, or the only
   * one), and the answer goes back. When the request cannot be tied to one call (several in
   * flight on this connection, none named), no one is asked and the server gets `cancel`.
   */
  private async elicit(params: ElicitRequest['params']): Promise<ElicitResult> {
    if (params.mode === 'url') return { action: 'decline' };
    const named = params._meta?.[IDEMPOTENCY_META];
    const entry =
      typeof named === 'string'
        ? this.inFlight.get(named)
        : this.inFlight.size === 1
          ? [...this.inFlight.values()][0]
          : undefined;
    if (!entry) {
      process.emitWarning(
        `MCP server ${describeServer(this.spec)} asked a question that Baton cannot tie to one call (${this.inFlight.size} in flight, none named in _meta '${IDEMPOTENCY_META}'): answered cancel`,
      );
      return { action: 'cancel' };
    }
    if (!entry.ask) return { action: 'decline' };
    const answer = await entry.ask({
      question: params.message,
      schema: params.requestedSchema as Record<string, unknown>,
      from: { server: entry.server },
    });
    if (answer.action === 'accept') return { action: 'accept', content: answer.answer as ElicitResult['content'] };
    return { action: answer.action };
  }

  private connect(): Promise<Client> {
    // Form-mode elicitation: a server may ask a person during a call (in flight), and its
    // `input_required` results are understood (docs: README, MCP servers that ask).
    const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request) => this.elicit(request.params));
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
