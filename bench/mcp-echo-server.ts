/**
 * The bench's MCP server: one read-only tool, `page.read`, that answers what the in-process
 * `page.read` of `read-loop.ts` answers, over stdio (`--stdio`) or Streamable HTTP on loopback
 * (`--http`, one session per client, JSON responses; prints {"url"}).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

function makeServer(): McpServer {
  const server = new McpServer({ name: 'pages', version: '1.0.0' });
  server.registerTool(
    'page.read',
    {
      description: 'Reads a page',
      inputSchema: { n: z.number() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ n }) => ({ content: [], structuredContent: { n, text: 'a page of text' } }),
  );
  return server;
}

if (process.argv.includes('--stdio')) {
  await makeServer().connect(new StdioServerTransport());
} else {
  // Stateful: one server and transport per session (the client keeps its session), as a
  // long-lived service would run.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return void known.handleRequest(req, res);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    void makeServer()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
}
