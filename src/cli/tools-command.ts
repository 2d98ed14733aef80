/** `baton tools`: the tools runs can call, and what each runs as (effect, risk, trust, MCP origin). */
import type { ToolJson } from './api-json.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { AGENT_HELP, AGENT_OPTIONS, HELP_FLAG, TARGET_HELP, TARGET_OPTIONS, takePositionals } from './parse-flags.js';
import { terminalText } from './terminal-text.js';

/** The usage text of `baton tools`. */
export const TOOLS_USAGE = `Usage: baton tools [--json] [--url <url> [--token <token>] | --agent <agent>]

Lists the tools runs can call: a server's (--url), or an agent's in process (--agent), with what
each runs as: its effect class (what happens after a crash mid-call), its risk (whether a
human approves), whether its output is trusted, and, for a tool from an MCP server, the
server, the tool's name there and what the application set over its annotations.

Options:
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

With --json, prints one object: { "tools": [...] }, as GET /v1/tools answers.

${EXIT_HELP}
`;

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** The tools as a table. */
export function toToolsTable(tools: ToolJson[]): string {
  if (tools.length === 0) return 'No tools.\n';
  const width = Math.max(...tools.map((t) => t.name.length), 4);
  const lines = [`${pad('NAME', width)}  ${pad('EFFECT', 12)}  ${pad('RISK', 11)}  ${pad('OUTPUT', 9)}  FROM`];
  for (const t of tools) {
    const from = t.origin
      ? `MCP ${t.origin.server}: ${t.origin.tool}${t.origin.overridden.length > 0 ? ` (set: ${t.origin.overridden.join(', ')})` : ''}`
      : '-';
    lines.push(
      `${pad(t.name, width)}  ${pad(t.effect, 12)}  ${pad(t.risk, 11)}  ${pad(t.trusted_output ? 'trusted' : 'untrusted', 9)}  ${from}`,
    );
  }
  return terminalText(`${lines.join('\n')}\n`);
}

/** Runs `baton tools`; resolves with the exit code. */
export const runToolsCommand = defineCommand({
  name: 'tools',
  usage: TOOLS_USAGE,
  options: { ...TARGET_OPTIONS, ...AGENT_OPTIONS },
  async run({ values, positionals }, { io, open }) {
    takePositionals(positionals, { required: [] });
    const backend = await open(values, { drive: true });
    const tools = await backend.tools();
    io.stdout.write(values.json ? `${JSON.stringify({ tools })}\n` : toToolsTable(tools));
    return EXIT.ok;
  },
});
