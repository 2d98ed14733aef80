/**
 * A Baton process whose tools come from an MCP server over HTTP: it starts one run with a
 * scripted planner, prints `{"run_id"}`, then `{"status"}` once the run is terminal or waits for
 * a human, and stays up until the test SIGKILLs it (mid-call, or while the run waits).
 */
import { createRuntime, createScriptedPlanner, type Decision } from '../../src/index.js';
import { createMcpTools, type McpToolOverride } from '../../src/tools/mcp/index.js';

const { db, url, script, overrides } = JSON.parse(process.argv[2]!) as {
  db: string;
  url: string;
  script: Decision[];
  overrides?: Record<string, McpToolOverride>;
};

const notes = await createMcpTools({ url }, overrides ? { overrides } : {});
const runtime = createRuntime({ database: db, planner: createScriptedPlanner(script), tools: notes.tools });
const run = await runtime.start({ input: 'work with the notes' });
process.stdout.write(`${JSON.stringify({ run_id: run.id })}\n`);
const settled = await runtime.wait(run.id);
process.stdout.write(`${JSON.stringify({ status: settled.status })}\n`);
setInterval(() => undefined, 1 << 30);
