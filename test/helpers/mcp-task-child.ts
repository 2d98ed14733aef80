/**
 * A Baton process for the MCP task crash test: `start` starts a run whose call builds a report as
 * an MCP task (a failpoint kills it once the task's handle is saved); `resume` finds the run in
 * the file, follows it to its end and prints `{"run", "status", "answer"}`.
 */
import { createRuntime } from '../../src/index.js';
import { createMcpTools } from '../../src/tools/mcp/index.js';
import { reportOptions } from './mcp-task-agent.js';

const { database, url, phase } = JSON.parse(process.argv[2]!) as {
  database: string;
  url: string;
  phase: 'start' | 'resume';
};
const reports = await createMcpTools({ url });
const runtime = createRuntime(reportOptions(database, reports));
await runtime.ready;
const id =
  phase === 'start'
    ? (await runtime.start({ input: 'a report on Zog' })).id
    : (await runtime.list({ limit: 10 })).runs[0]!.id;
const run = await runtime.wait(id);
process.stdout.write(`${JSON.stringify({ run: run.id, status: run.status, answer: run.answer })}\n`);
await runtime.close();
await reports.close();
