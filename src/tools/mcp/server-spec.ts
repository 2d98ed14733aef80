/**
 * Where an MCP server is: a command to start (stdio) or a URL (Streamable HTTP). Plain data with
 * no SDK types, so the public declarations of `baton-runtime/mcp` do not load the SDK's, which
 * need the DOM's `HeadersInit` and would fail a strict app's type-check without `lib: ["dom"]`.
 */

/** A server started as a child process, spoken to over its stdin/stdout. */
export interface McpStdioServer {
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (PATH, HOME, …), as the SDK does. */
  env?: Record<string, string>;
  cwd?: string;
  /** The child's stderr: inherited by default. */
  stderr?: 'inherit' | 'ignore';
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServer {
  url: string | URL;
  /** Sent with every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
}

/** An MCP server to connect to. */
export type McpServerSpec = McpStdioServer | McpHttpServer;
