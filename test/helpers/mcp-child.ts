/**
 * A Baton process whose tools come from an MCP server over HTTP: it starts one run with a
 * scripted planner, prints `{"run_id"}`, then `{"status"}` each time the run is terminal or waits
 * for a human (a question asked in flight prints `executing`, and the run is followed on), and
 * stays up until the test SIGKILLs it (mid-call, or while the run waits).
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
// wait() returns when the run ends or waits for a person: in `waiting_human`, or while a call
// asks in flight (`executing` with a pending question), which another process may answer.
for (;;) {
  const settled = await runtime.wait(run.id);
  process.stdout.write(`${JSON.stringify({ status: settled.status })}\n`);
  if (settled.status !== 'executing') break;
  // Followed until that question is decided (here or by another process), then waited for again.
  const asked = settled.pendingInput?.id;
  for await (const event of runtime.events(run.id, { follow: true })) {
    if (event.type === 'input_result' && event.data.input_id === asked) break;
  }
}
setInterval(() => undefined, 1 << 30);
