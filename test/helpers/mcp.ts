/** The tests' MCP servers: the note server over stdio (a child of the toolset) or over HTTP (a child of the test). */
import { join } from 'node:path';
import { afterEach } from 'vitest';
import {
  createMcpTools,
  type McpServerSpec,
  type McpStdioServer,
  type McpToolsOptions,
  type McpToolset,
} from '../../src/tools/mcp/index.js';
import { REPO_ROOT } from './run-node.js';
import { spawnUntilJsonLine, type RunningChild } from './spawn-child.js';

export const MCP_SERVER = join(REPO_ROOT, 'test/helpers/mcp-server.ts');

/**
 * The note server as a stdio server: the toolset starts it (again after it dies); `refusing`
 * adds the tools a client cannot simply call, `images` the tool that answers with a PNG.
 */
export function stdioNotes(journal: string, refusing = false, images = false, asking = false): McpStdioServer {
  return {
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      MCP_SERVER,
      '--journal',
      journal,
      '--stdio',
      ...(refusing ? ['--refusing'] : []),
      ...(images ? ['--images'] : []),
      ...(asking ? ['--asking'] : []),
    ],
    cwd: REPO_ROOT,
  };
}

/** The note server over Streamable HTTP on loopback (on `port`, or any free one). */
export async function httpNotes(
  journal: string,
  port?: number,
  token?: string,
  staleSession?: 400 | 404,
  sse?: boolean,
  asking?: boolean,
): Promise<RunningChild<{ url: string; pid: number }>> {
  const args = [
    MCP_SERVER,
    '--journal',
    journal,
    '--http',
    ...(port ? ['--port', String(port)] : []),
    ...(token ? ['--token', token] : []),
    ...(staleSession ? ['--stale-session', String(staleSession)] : []),
    ...(sse ? ['--sse'] : []),
    ...(asking ? ['--asking'] : []),
  ];
  return spawnUntilJsonLine<{ url: string; pid: number }>(args[0]!, args.slice(1));
}

/**
 * The toolsets and child processes (servers, Baton children) a test file opens, closed after each
 * test: `toolset()` connects one, and a child pushed on `children` is killed.
 */
export function mcpFixtures() {
  const toolsets: McpToolset[] = [];
  const children: RunningChild<unknown>[] = [];
  afterEach(async () => {
    for (const set of toolsets.splice(0)) await set.close();
    for (const child of children.splice(0)) await child.kill();
  });
  return {
    children,
    async toolset(spec: McpServerSpec, options?: McpToolsOptions): Promise<McpToolset> {
      const set = await createMcpTools(spec, options);
      toolsets.push(set);
      return set;
    },
  };
}
