/** A runtime whose one tool is the report server's task tool: it builds a report (on Zog), then answers with it. */
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import type { McpToolset } from '../../src/tools/mcp/index.js';

export function reportOptions(database: string, reports: McpToolset, topic = 'Zog'): RuntimeOptions {
  return {
    database,
    tools: reports.tools,
    planner: createScriptedPlanner([
      { type: 'tool_calls', calls: [{ tool: 'build_report', args: { topic } }] },
      (request) => ({
        type: 'final',
        answer: `got: ${request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? ''}`,
      }),
    ]),
  };
}
