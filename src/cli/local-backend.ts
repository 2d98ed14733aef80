/**
 * The runs of a SQLite file or a PostgreSQL database, driven by a runtime in this process. Only
 * the runs this process starts or decides are driven here (no recovery of others); read-only use
 * never creates the file.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BatonError, createFailure, quoteId } from '../failure.js';
import {
  createRuntime,
  createScriptedPlanner,
  resolveAgentPlanner,
  subAgentsOf,
  type Agent,
  type ModelSettings,
  type Runtime,
} from '../index.js';
import { describeTools } from '../runtime/index.js';
import { isPostgresUrl } from '../store/index.js';
import { abortable } from './abortable.js';
import {
  toApprovalJson,
  toEventJson,
  toRerunReportJson,
  toRunJson,
  toSnakeJson,
  toToolCallJson,
  type ToolJson,
} from './api-json.js';
import { forkBodySchema, rerunBodySchema, toForkRequest, toRerunFilter } from '../server/routes/fork-body.js';
import type { Backend } from './backend.js';
import { describeDatabase } from './mask.js';
import { buildRunExport } from '../server/run-export.js';
import { parseInput } from '../server/read-body.js';
import { answerBodySchema, decideBody, decisionBodySchema } from '../server/routes/decision-body.js';
import { DEMO_AGENT } from '../demo/index.js';
import { localSchedules } from './local-schedules.js';

/** How a local backend opens its runtime. */
export interface LocalOptions {
  /** A SQLite file path or a `postgres://` URL. */
  database: string;
  /** The agent that drives runs; without one the backend can only read (and never creates the file). */
  agent?: Agent | undefined;
  model?: ModelSettings;
  /** Recorded as the decider of approvals. */
  by: string;
}

function notFound(runId: string): BatonError {
  return new BatonError(createFailure('run.not_found', `Run ${quoteId(runId)} does not exist`));
}

/** Opens the runs of `options.database` (lazily: the database is opened on first use). */
export function createLocalBackend(options: LocalOptions): Backend & { planner: string | undefined } {
  // A URL as given (resolve() would make it a path in the working directory), a path made absolute.
  const database = isPostgresUrl(options.database) ? options.database : resolve(options.database);
  const resolved = options.agent ? resolveAgentPlanner(options.agent, options.model) : undefined;
  let runtime: Runtime | undefined;
  // Runs this process drives (started or decided here): `settle` waits for them to move on.
  const driven = new Set<string>();

  /** The runtime, or undefined when reading a file that does not exist. */
  function open(): Runtime | undefined {
    if (runtime) return runtime;
    if (!options.agent && !isPostgresUrl(database) && !existsSync(database)) return undefined;
    runtime = createRuntime({
      database,
      planner: resolved?.planner ?? createScriptedPlanner([]),
      // Reading without an agent, the calls of the default agent's (the demo's) runs are
      // described by its tools, as `baton serve` describes them: a call's risk is the same in
      // process as over HTTP. Its tools are never run here: nothing reads without an agent drives.
      tools: options.agent?.tools ?? DEMO_AGENT.tools,
      // The agents its tools call plan with the same model settings.
      ...(options.agent ? { agents: subAgentsOf(options.agent, options.model) } : {}),
      ...(options.agent?.policy ? { policy: options.agent.policy } : {}),
      agent: options.agent?.name ?? DEMO_AGENT.name,
      recover: false,
    });
    return runtime;
  }

  function must(runId: string): Runtime {
    const rt = open();
    if (!rt) throw notFound(runId);
    return rt;
  }

  async function* events(runId: string, opts: { after?: number; follow: boolean; signal?: AbortSignal }) {
    const rt = must(runId);
    // A missing run answers run.not_found before anything is followed.
    await rt.get(runId);
    // The runtime's one way to follow a run: live for runs driven here, read from the file for
    // runs another process drives.
    const source = rt.events(runId, { after: opts.after ?? 0, follow: opts.follow, signal: opts.signal });
    for await (const event of abortable(source, opts.signal)) yield toEventJson(event);
  }

  return {
    // Printed, so without a URL's password.
    where: describeDatabase(database),
    inProcess: true,
    planner: resolved?.description,
    schedules: (request) => localSchedules(open, request, driven),
    async start(body) {
      // Starting needs an agent, and with one the file is always opened (or created).
      const rt = open()!;
      const run = await rt.start({
        input: body.input,
        ...(body.session_id ? { sessionId: body.session_id } : {}),
        ...(body.options?.on_busy ? { onBusy: body.options.on_busy } : {}),
        ...(body.context ? { context: body.context } : {}),
        ...(body.metadata ? { metadata: body.metadata } : {}),
        ...(body.tags ? { tags: body.tags } : {}),
      });
      driven.add(run.id);
      return toRunJson(run);
    },
    async get(runId) {
      return toRunJson(await must(runId).get(runId));
    },
    async list(filter) {
      const rt = open();
      if (!rt) return { runs: [], next_cursor: null };
      const page = await rt.list({
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.limit ? { limit: filter.limit } : {}),
        ...(filter.forkedFrom ? { forkedFrom: filter.forkedFrom } : {}),
        ...(filter.parentRunId ? { parentRunId: filter.parentRunId } : {}),
        ...(filter.metadata ? { metadata: filter.metadata } : {}),
        ...(filter.tags?.length ? { tags: filter.tags } : {}),
        ...(filter.failureCode ? { failureCode: filter.failureCode } : {}),
        ...(filter.createdAfter !== undefined ? { createdAfter: filter.createdAfter } : {}),
      });
      return { runs: page.runs.map(toRunJson), next_cursor: page.nextCursor };
    },
    async artifact(runId, sha256) {
      const artifact = await must(runId).artifact(runId, sha256);
      return { mediaType: artifact.mediaType, content: artifact.content };
    },
    async exportRun(runId) {
      return buildRunExport(must(runId), runId);
    },
    async steps(runId) {
      return (await must(runId).steps(runId)).map(toSnakeJson);
    },
    async tools() {
      // The agent's tools, without opening the database.
      return describeTools(options.agent?.tools ?? []).map((tool) => toSnakeJson(tool) as ToolJson);
    },
    async toolCalls(runId) {
      return (await must(runId).toolCalls(runId)).map(toToolCallJson);
    },
    events,
    ...movesOf(must, driven, options.by),
    async fork(runId, body, opts = {}) {
      const rt = must(runId);
      const given = opts.ownAgent && options.agent ? { ...body, agent: options.agent.name } : body;
      const request = toForkRequest(parseInput(forkBodySchema, given, 'fork'), options.by);
      const fork = await rt.fork(runId, request);
      driven.add(fork.id);
      return toRunJson(fork);
    },
    async rerun(body) {
      const rt = open();
      const filter = toRerunFilter(parseInput(rerunBodySchema, body, 'rerun'), options.by, undefined);
      if (!rt)
        return toRerunReportJson({
          dryRun: filter.dryRun === true,
          matched: 0,
          created: 0,
          existing: 0,
          reruns: [],
          failed: [],
        });
      const report = await rt.rerun(filter);
      for (const entry of report.reruns) if (entry.created && entry.runId) driven.add(entry.runId);
      return toRerunReportJson(report);
    },
    async settle(runId) {
      const rt = must(runId);
      return toRunJson(driven.has(runId) ? await rt.wait(runId) : await rt.get(runId));
    },
    async close() {
      await runtime?.close();
    },
  };
}

/**
 * The commands that move a run on (decide, answer, cancel, pause, resume), checked as the server
 * checks them; the runs they load are driven here afterwards (`driven`), for `settle`.
 */
function movesOf(
  must: (runId: string) => Runtime,
  driven: Set<string>,
  by: string,
): Pick<Backend, 'decide' | 'answer' | 'cancel' | 'pause' | 'resume'> {
  return {
    async decide(runId, approvalId, body) {
      const rt = must(runId);
      // The server's own check of a decision body: the same refusals in process as over HTTP.
      const decision = parseInput(decisionBodySchema, body, 'decision');
      // Deciding loads the run into this runtime, which then drives it.
      driven.add(runId);
      return toApprovalJson(await decideBody(rt, runId, approvalId, decision, by));
    },
    async answer(runId, inputId, body) {
      const rt = must(runId);
      const { answer, reason } = parseInput(answerBodySchema, body, 'answer');
      driven.add(runId);
      return toApprovalJson(
        await rt.answer(runId, inputId, { answer, by, ...(reason === undefined ? {} : { reason }) }),
      );
    },
    async cancel(runId, { reason, compensate }) {
      // A compensating run is driven here until it ends (see `settle`).
      if (compensate) driven.add(runId);
      return toRunJson(
        await must(runId).cancel(runId, { ...(reason ? { reason } : {}), ...(compensate ? { compensate } : {}) }),
      );
    },
    async pause(runId, { reason }) {
      return toRunJson(await must(runId).pause(runId, { by, ...(reason ? { reason } : {}) }));
    },
    async resume(runId, { reason }) {
      // Resuming loads the run into this runtime, which then drives it.
      driven.add(runId);
      return toRunJson(await must(runId).resume(runId, { by, ...(reason ? { reason } : {}) }));
    },
  };
}
