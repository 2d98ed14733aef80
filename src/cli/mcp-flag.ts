/**
 * `--mcp [<name>=]<command or url>`: an MCP server whose tools join the agent's, for `baton serve`
 * and `baton worker` (a quick start; an agent module can call `createMcpTools` itself). A value
 * that starts with http:// or https:// is a Streamable HTTP server; anything else is a command
 * line, split like a shell's words (quotes, no expansion), whose process speaks MCP over stdio.
 * A leading `<name>=` names the server and puts `<name>.` before each of its tools, so two
 * servers with a tool of the same name can both be added.
 */
import { defineAgent, type Agent } from '../index.js';
import type { McpServerSpec, McpToolset } from '../tools/mcp/index.js';
import { usageError } from './cli-error.js';

/** Splits a command line into words: whitespace separates, quotes group, a backslash escapes. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: '"' | "'" | null = null;
  let started = false;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      started = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[++i];
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += ch;
      started = true;
    }
  }
  if (quote) throw usageError(`--mcp has an unclosed ${quote} quote: ${line}`);
  if (started) words.push(word);
  return words;
}

/** One `--mcp` value as a server to connect to. */
export function toMcpServer(value: string): McpServerSpec {
  if (/^https?:\/\//.test(value)) return { url: value };
  const [command, ...args] = splitCommand(value);
  if (!command) throw usageError('--mcp needs a command line or an http(s):// URL');
  // The process gets a minimal environment (PATH, HOME, …); `env NAME=value command …` adds to it.
  return { command, args };
}

// A name as tool names take it (`<name>.<tool>`): a letter, then letters, digits, `_` or `-`.
const SERVER_NAME = /^([a-zA-Z][a-zA-Z0-9_-]{0,31})=/;

/** One `--mcp` value: the server, and the name its tools are put under, if it has one. */
export interface McpFlag {
  spec: McpServerSpec;
  /** From `<name>=…`: the server's name, and `<name>.` before each of its tools. */
  name?: string;
}

/** Parses `[<name>=]<command or url>`. */
export function parseMcpFlag(value: string): McpFlag {
  const named = SERVER_NAME.exec(value);
  if (!named) return { spec: toMcpServer(value) };
  const rest = value.slice(named[0].length);
  if (rest.trim() === '')
    throw usageError(`--mcp ${named[1]}= needs a command line or an http(s):// URL after the '='`);
  return { spec: toMcpServer(rest), name: named[1]! };
}

/** A server tool `--mcp` left out, and why. */
export interface McpSkipped {
  server: string;
  tool: string;
  reason: string;
}

/** The agent with the tools of each `--mcp` server added, and how to close their connections. */
export async function withMcpTools(
  agent: Agent,
  values: string[] | undefined,
): Promise<{ agent: Agent; servers: string[]; skipped: McpSkipped[]; close(): Promise<void> }> {
  if (!values || values.length === 0) return { agent, servers: [], skipped: [], close: async () => undefined };
  const flags = values.map(parseMcpFlag);
  const { createMcpTools } = await import('../tools/mcp/index.js');
  const sets: McpToolset[] = [];
  const close = async () => {
    await Promise.all(sets.map((set) => set.close()));
  };
  try {
    for (const { spec, name } of flags) {
      sets.push(await createMcpTools(spec, name ? { name, prefix: `${name}.` } : {}));
    }
    const tools = [...agent.tools, ...sets.flatMap((set) => set.tools)];
    const names = new Set<string>();
    for (const tool of tools) {
      if (names.has(tool.name)) {
        throw usageError(
          `Two tools are named '${tool.name}' (the agent's and --mcp servers'): name each server, ` +
            `--mcp <name>=<command or url>, to call its tools <name>.<tool>`,
        );
      }
      names.add(tool.name);
    }
    const skipped = sets.flatMap((set) => set.skipped.map((s) => ({ server: set.server, ...s })));
    return { agent: defineAgent({ ...agent, tools }), servers: sets.map((set) => set.server), skipped, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The lines that say which `--mcp` tools were left out, for a start-up report. */
export function skippedLines(skipped: readonly McpSkipped[]): string[] {
  return skipped.map((s) => `MCP tool left out: ${s.server}: ${s.tool} (${s.reason})`);
}
