/** The runs of a Baton server, through its HTTP API and SSE streams. The server drives them. */
import type { ApprovalJson, RerunReportJson, RunJson, RunPage, ToolJson } from './api-json.js';
import type { Backend } from './backend.js';
import { createHttpClient, type HttpTarget } from './http-client.js';
import { streamRunEvents } from './stream-run-events.js';

/** Connects to the server at `target.url` (nothing is sent until the first call). */
export function createHttpBackend(target: HttpTarget): Backend {
  const client = createHttpClient(target);
  const run = (runId: string) => `/v1/runs/${encodeURIComponent(runId)}`;
  return {
    where: client.url,
    inProcess: false,
    start: (body) => client.request<RunJson>('POST', '/v1/runs', body),
    get: (runId) => client.request<RunJson>('GET', run(runId)),
    list(filter) {
      const query = new URLSearchParams();
      if (filter.status) query.set('status', filter.status);
      if (filter.limit) query.set('limit', String(filter.limit));
      if (filter.forkedFrom) query.set('forked_from', filter.forkedFrom);
      if (filter.parentRunId) query.set('parent_run_id', filter.parentRunId);
      for (const [key, value] of Object.entries(filter.metadata ?? {})) query.set(`metadata.${key}`, value);
      for (const tag of filter.tags ?? []) query.append('tag', tag);
      if (filter.failureCode) query.set('failure_code', filter.failureCode);
      if (filter.createdAfter !== undefined) query.set('created_after', String(filter.createdAfter));
      const search = query.size > 0 ? `?${query}` : '';
      return client.request<RunPage>('GET', `/v1/runs${search}`);
    },
    async artifact(runId, sha256) {
      return client.bytes(`${run(runId)}/artifacts/${encodeURIComponent(sha256)}`);
    },
    async exportRun(runId) {
      return client.request<Record<string, unknown>>('GET', `${run(runId)}/export`);
    },
    async tools() {
      return (await client.request<{ tools: ToolJson[] }>('GET', '/v1/tools')).tools;
    },
    async steps(runId) {
      return (await client.request<{ steps: unknown[] }>('GET', `${run(runId)}/steps`)).steps;
    },
    async toolCalls(runId) {
      return (await client.request<{ tool_calls: unknown[] }>('GET', `${run(runId)}/tool-calls`)).tool_calls;
    },
    events: (runId, options) => streamRunEvents(client, runId, options),
    decide: (runId, approvalId, body) =>
      client.request<ApprovalJson>('POST', `${run(runId)}/approvals/${encodeURIComponent(approvalId)}`, body),
    answer: (runId, inputId, body) =>
      client.request<ApprovalJson>('POST', `${run(runId)}/inputs/${encodeURIComponent(inputId)}`, body),
    cancel: (runId, { reason, compensate }) =>
      client.request<RunJson>(
        'POST',
        `${run(runId)}/cancel`,
        reason || compensate ? { ...(reason ? { reason } : {}), ...(compensate ? { compensate } : {}) } : undefined,
      ),
    schedules(request) {
      if (request.op === 'create') return client.request('POST', '/v1/schedules', request.body);
      if (request.op === 'list') return client.request('GET', '/v1/schedules');
      const path = `/v1/schedules/${encodeURIComponent(request.id)}`;
      if (request.op === 'show') return client.request('GET', path);
      if (request.op === 'delete') return client.request('DELETE', path).then(() => null);
      return client.request('POST', `${path}/${request.op}`);
    },
    pause: (runId, { reason }) =>
      client.request<RunJson>('POST', `${run(runId)}/pause`, reason ? { reason } : undefined),
    resume: (runId, { reason }) =>
      client.request<RunJson>('POST', `${run(runId)}/resume`, reason ? { reason } : undefined),
    fork: (runId, body) => client.request<RunJson>('POST', `${run(runId)}/fork`, body),
    rerun: (body) => client.request<RerunReportJson>('POST', '/v1/reruns', body),
    settle: (runId) => client.request<RunJson>('GET', run(runId)),
    async close() {},
  };
}
