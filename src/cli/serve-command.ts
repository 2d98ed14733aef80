/**
 * `baton serve`: the HTTP API over a runtime on a SQLite file or a PostgreSQL database. It
 * resumes the unfinished runs (and, as a worker, goes on claiming runs no one holds), serves
 * until SIGTERM or SIGINT, then stops accepting, ends open event streams and closes the runtime;
 * runs still in flight resume on the next start (or on another worker).
 */
import { describeLimits, LIMIT_FLAGS, LIMIT_USAGE, limitsOf } from './limit-flags.js';
import { createRuntime, resolveAgentPlanner, subAgentsOf, type PruneReport, type Runtime } from '../index.js';
import { createServer, loadAuthConfig, type Listening } from '../server/index.js';
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { loadAgent } from './load-agent.js';
import { DEFAULT_DB, databaseOf } from './open-backend.js';
import { describeDatabase, maskCredentials } from './mask.js';
import { AGENT_OPTIONS, takePositionals } from './parse-flags.js';
import { logEventsUntilStopped } from './log-until-stopped.js';
import { toDurationMs } from './duration.js';
import { describePrune, toPruneJson } from './prune-command.js';
import { skippedLines, withMcpTools } from './mcp-flag.js';
import { logBackgroundErrors } from './background-errors.js';

/** The default port of `baton serve`. */
export const DEFAULT_PORT = 7420;

/** The usage text of `baton serve`. */
export const SERVE_USAGE = `Usage: baton serve [--db <file>|<postgres-url>] [--no-worker] [--host <host>] [--port <port>]
                   [--agent demo|<module>] [--dir <dir>] [--tokens <file>] [--model <name>]
                   [--base-url <url>] [--mcp [<name>=]<command>|<url>]…
                   [--retention <duration> [--retention-every <duration>]]
                   [--runs-per-tenant <n>] [--model-concurrency <n>] [--model-rate <n>/<duration>]
                   [--json]

Serves the Baton HTTP API (runs, SSE event streams, approvals) for one agent, on an embedded
SQLite file or a PostgreSQL database shared with other serve and worker processes. On start it
resumes the runs left unfinished, and goes on claiming runs no live process holds. SIGTERM or
Ctrl-C stops it gracefully: no new requests, open event streams end (clients reconnect with
Last-Event-ID), the runtime closes, and runs still in flight resume on the next start or on
another worker.

Options:
  --db <db>         SQLite database file (default ${DEFAULT_DB}) or postgres://… URL
  --no-worker       drive no runs here: record them and decisions, and leave driving them to
                    'baton worker' processes on the same database
  --host <host>     address to listen on (default 127.0.0.1)
  --port <port>     port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --agent <agent>   'demo' (built in) or a module whose default export is defineAgent(...)
                    (default demo); a .ts module needs NODE_OPTIONS='--import tsx'
  --dir <dir>       the demo agent's config directory (default ./.baton/demo-configs)
  --tokens <file>   token configuration (JSON, see below); default $BATON_TOKENS (the JSON
                    itself) or $BATON_TOKENS_FILE
  --model <name>    model to plan with (default $OPENAI_MODEL, else gpt-4.1-mini)
  --base-url <url>  an OpenAI-compatible endpoint (default $OPENAI_BASE_URL)
  --mcp <server>    add an MCP server's tools to the agent's: a command line started as a
                    child process (stdio), or an http(s):// Streamable HTTP URL; repeatable.
                    <name>=<server> names it and calls its tools <name>.<tool> (two servers
                    with one tool name: --mcp a=… --mcp b=…); tools that require MCP tasks
                    are left out, each named in the start-up report
  --retention <d>   prune runs that finished longer ago than this on a schedule, as
                    'baton prune' does: a number with its unit (30d, 12h, 15m, 90s, 500ms;
                    a bare number is refused); printed at start, and each prune is logged
  --retention-every <d>  how often, with its unit too (default 1h)
${LIMIT_USAGE}
  --json            log as JSON lines
  -h, --help        show this help

The first line printed is 'Listening on <url>' (with --json, {"type":"listening","url":...}); the
next one is the inspector's address, <url>/inspector/: a live web page of the runs. The start-up
report then names the agent, the database, the retention ('Retention: finished runs older than
30d pruned every 1h', or none), the auth and the limits.
Without tokens the server runs in dev mode: loopback only, every caller may do everything.
Tokens: {"tokens":[{"token":"<16+ chars>","tenant":"acme","roles":["submit","approve","view"],
"name":"alice"}]}; roles are submit, approve, view and admin.
SSE tickets are signed with a key kept in the database (shared by every server on it), or with
$BATON_TICKET_SECRET (32+ characters) when set.

${EXIT_HELP}
`;

function toPort(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 0 && port <= 65535)) throw usageError(`--port must be 0-65535, not '${value}'`);
  return port;
}

/** Runs `baton serve` until a signal; resolves with the exit code (0 after a graceful stop). */
export const runServeCommand = defineCommand({
  name: 'serve',
  usage: SERVE_USAGE,
  options: {
    ...AGENT_OPTIONS,
    db: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    tokens: { type: 'string' },
    'no-worker': { type: 'boolean', default: false },
    mcp: { type: 'string', multiple: true },
    retention: { type: 'string' },
    'retention-every': { type: 'string' },
    ...LIMIT_FLAGS,
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  async run({ values, positionals }, { io, signal }) {
    takePositionals(positionals, { required: [] });
    const port = toPort(values.port);
    const log = (text: string, json: Record<string, unknown>) =>
      io.stdout.write(values.json ? `${JSON.stringify(json)}\n` : `${text}\n`);
    const auth = loadAuthConfig(values.tokens === undefined ? {} : { file: values.tokens });
    const database = databaseOf(values.db);
    const worker = !values['no-worker'];
    const limits = limitsOf(values);
    if (values['retention-every'] !== undefined && values.retention === undefined) {
      throw usageError('--retention-every goes with --retention <duration>');
    }
    const retention =
      values.retention === undefined
        ? undefined
        : {
            maxAgeMs: toDurationMs(values.retention, '--retention'),
            everyMs:
              values['retention-every'] === undefined
                ? 3_600_000
                : toDurationMs(values['retention-every'], '--retention-every'),
            onPrune: (report: PruneReport | null, error?: unknown) => {
              if (report) log(describePrune(report), { type: 'pruned', ...toPruneJson(report) });
              else
                io.stderr.write(
                  `baton serve: a scheduled prune failed: ${maskCredentials(error instanceof Error ? error.message : String(error), [database])}\n`,
                );
            },
          };
    if (retention && retention.everyMs < 1_000) throw usageError('--retention-every must be at least 1s');
    // What the schedule will delete, said at start in the units it was given.
    const olderThan = values.retention?.trim();
    const every = values['retention-every']?.trim() ?? '1h';
    const retentionLine = retention
      ? `finished runs older than ${olderThan} pruned every ${every}`
      : 'none (finished runs are kept; see --retention)';
    const retentionJson = retention
      ? { older_than: olderThan, older_than_ms: retention.maxAgeMs, every, every_ms: retention.everyMs }
      : null;
    const mcp = await withMcpTools(await loadAgent(values.agent ?? 'demo', { dir: values.dir }), values.mcp);
    const { agent } = mcp;
    let runtime: Runtime | undefined;
    let listening: Listening | undefined;
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
        recover: false,
        claim: worker,
        drive: worker,
        ...(retention ? { retention } : {}),
        agent: agent.name,
        ...(limits ? { limits } : {}),
        onError: logBackgroundErrors(io.stderr, values.json),
      });
      await runtime.ready;
      const resumed = worker ? await runtime.recover() : [];
      listening = await createServer({ runtime, auth }).listen({ host: values.host, port });
      log(`Listening on ${listening.url}`, { type: 'listening', url: listening.url });
      const tokens = auth.tokens.length;
      const inspector = `${listening.url}/inspector/`;
      log(
        [
          `Inspector: ${inspector}`,
          `Agent: ${agent.name} (planner: ${description}; ${agent.tools.length} tools${mcp.servers.length > 0 ? `, MCP: ${mcp.servers.join(', ')}` : ''})`,
          ...skippedLines(mcp.skipped),
          `Database: ${describeDatabase(database)} (${worker ? `resumed ${resumed.length} unfinished runs` : 'no worker: runs are driven by workers'})`,
          `Retention: ${retentionLine}`,
          `Auth: ${tokens > 0 ? `${tokens} tokens` : 'none (dev mode: loopback only, every caller may do everything)'}`,
          `Limits: ${describeLimits(values)}`,
        ].join('\n'),
        {
          type: 'started',
          inspector_url: inspector,
          agent: agent.name,
          planner: description,
          tools: agent.tools.map((t) => t.name),
          mcp_servers: mcp.servers,
          mcp_skipped: mcp.skipped,
          database: describeDatabase(database),
          retention: retentionJson,
          limits: {
            runs_per_tenant: limits?.runsPerTenant ?? null,
            model_concurrency: limits?.planner?.concurrency?.limit ?? null,
            model_rate: limits?.planner?.rate
              ? { limit: limits.planner.rate.limit, interval_ms: limits.planner.rate.intervalMs }
              : null,
          },
          worker,
          resumed,
          tokens,
        },
      );
      for (const [runId, failure] of runtime.recoveryFailures) {
        io.stderr.write(`baton serve: run ${runId} was not resumed: ${failure.message} (${failure.code})\n`);
      }
      await logEventsUntilStopped(runtime, ['run.created', 'state'], log, signal);
      log('Stopping: closing connections and the runtime', { type: 'stopping' });
      return EXIT.ok;
    } finally {
      // Stop accepting first, so nothing reaches a closed runtime; then close the file.
      await listening?.close();
      await runtime?.close();
      await mcp.close();
      if (listening) log('Stopped; unfinished runs resume on the next start', { type: 'stopped' });
    }
  },
});
