/**
 * `baton worker`: a process that drives runs and serves no HTTP. It claims runs that need
 * driving on a database it shares with `baton serve` processes and other workers (new runs,
 * runs resumed after a decision, runs whose worker stopped renewing its lease), drives them
 * with its agent's planner and tools, and on SIGTERM or Ctrl-C releases what it holds, so
 * another worker takes it over at once.
 */
import { MODEL_LIMIT_FLAGS, limitsOf, WORKER_LIMIT_USAGE } from './limit-flags.js';
import { createRuntime, resolveAgentPlanner, subAgentsOf, type Runtime } from '../index.js';
import { logBackgroundErrors } from './background-errors.js';
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { logEventsUntilStopped } from './log-until-stopped.js';
import { loadAgent } from './load-agent.js';
import { DEFAULT_DB, databaseOf } from './open-backend.js';
import { describeDatabase } from './mask.js';
import { AGENT_OPTIONS, takePositionals, toPositiveInt } from './parse-flags.js';
import { skippedLines, withMcpTools } from './mcp-flag.js';

/** The usage text of `baton worker`. */
export const WORKER_USAGE = `Usage: baton worker [--db <file>|<postgres-url>] [--agent demo|<module>] [--dir <dir>]
                    [--max-runs <n>] [--lease <ms>] [--model <name>] [--base-url <url>]
                    [--mcp [<name>=]<command>|<url>]… [--model-concurrency <n>]
                    [--model-rate <n>/<duration>] [--json]

Drives runs and serves no HTTP: any number of workers and 'baton serve' processes may share one
database. A worker claims the runs no live process holds, renews its claims every third of the
lease, and stops driving a run at once if it ever loses its claim. SIGTERM or Ctrl-C stops it:
its runs are released for the other workers.

Options:
  --db <db>         postgres://… URL or SQLite file (default ${DEFAULT_DB})
  --agent <agent>   'demo' (built in) or a module whose default export is defineAgent(...)
  --dir <dir>       the demo agent's config directory (default ./.baton/demo-configs)
  --max-runs <n>    most runs driven at once (default 1000)
  --lease <ms>      how long a claim lasts without renewal (default 30000)
  --model <name>    model to plan with (default $OPENAI_MODEL, else gpt-4.1-mini)
  --base-url <url>  an OpenAI-compatible endpoint (default $OPENAI_BASE_URL)
  --mcp <server>    add an MCP server's tools to the agent's (a command line, or an http(s)://
                    URL; <name>=<server> calls its tools <name>.<tool>); give the workers the
                    same --mcp servers as 'baton serve'; repeatable
${WORKER_LIMIT_USAGE}
  --json            log as JSON lines
  -h, --help        show this help

The first line printed is 'Worker <id> on <db>' (with --json, {"type":"worker",...}).

${EXIT_HELP}
`;

/** Runs `baton worker` until a signal; resolves with the exit code (0 after a graceful stop). */
export const runWorkerCommand = defineCommand({
  name: 'worker',
  usage: WORKER_USAGE,
  options: {
    ...AGENT_OPTIONS,
    db: { type: 'string' },
    'max-runs': { type: 'string' },
    ...MODEL_LIMIT_FLAGS,
    lease: { type: 'string' },
    mcp: { type: 'string', multiple: true },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  async run({ values, positionals }, { io, signal }) {
    takePositionals(positionals, { required: [] });
    const maxRuns = toPositiveInt(values['max-runs'], '--max-runs') ?? 1_000;
    const limits = limitsOf(values);
    const leaseMs = toPositiveInt(values.lease, '--lease') ?? 30_000;
    // Renewed every third of it: shorter than this and a busy process would lose its runs.
    if (leaseMs < 300) throw usageError(`--lease must be at least 300 ms, not ${leaseMs}`);
    const log = (text: string, json: Record<string, unknown>) =>
      io.stdout.write(values.json ? `${JSON.stringify(json)}\n` : `${text}\n`);
    const database = databaseOf(values.db);
    const mcp = await withMcpTools(await loadAgent(values.agent ?? 'demo', { dir: values.dir }), values.mcp);
    const { agent } = mcp;
    let runtime: Runtime | undefined;
    try {
      const settings = { model: values.model, baseURL: values['base-url'] };
      const { planner, description } = resolveAgentPlanner(agent, settings);
      runtime = createRuntime({
        database,
        planner,
        tools: agent.tools,
        // The agents its tools call plan with the same model settings.
        agents: subAgentsOf(agent, settings),
        ...(agent.policy ? { policy: agent.policy } : {}),
        leaseMs,
        maxRuns,
        agent: agent.name,
        ...(limits ? { limits } : {}),
        onError: logBackgroundErrors(io.stderr, values.json),
      });
      await runtime.ready;
      log(`Worker ${runtime.owner} on ${describeDatabase(database)} (agent ${agent.name}, planner: ${description})`, {
        type: 'worker',
        worker: runtime.owner,
        database: describeDatabase(database),
        agent: agent.name,
        planner: description,
        pid: process.pid,
        mcp_skipped: mcp.skipped,
      });
      for (const line of skippedLines(mcp.skipped)) if (!values.json) io.stdout.write(`${line}\n`);
      for (const [runId, failure] of runtime.recoveryFailures) {
        io.stderr.write(`baton worker: run ${runId} cannot be driven: ${failure.message} (${failure.code})\n`);
      }
      await logEventsUntilStopped(runtime, ['state'], log, signal);
      log('Stopping: releasing the runs held here', { type: 'stopping' });
      return EXIT.ok;
    } finally {
      await runtime?.close();
      await mcp.close();
    }
  },
});
