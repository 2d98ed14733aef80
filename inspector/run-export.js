// @ts-check
/**
 * Taking a run away from the page: one JSON file with everything the API knows of it (run,
 * events, steps, ledger, approvals, trace), and the commands that fetch the same from a shell.
 */
import { get, getToken } from './api.js';
import { h } from './dom.js';

/**
 * Everything about a run in one object, from the API (its events as the page received them).
 * @param {string} runId
 * @param {import('./types.js').EventJson[]} events
 */
export async function exportRun(runId, events) {
  const id = encodeURIComponent(runId);
  const [run, steps, toolCalls, approvals, trace] = await Promise.all([
    get(`/v1/runs/${id}`),
    get(`/v1/runs/${id}/steps`),
    get(`/v1/runs/${id}/tool-calls`),
    get(`/v1/runs/${id}/approvals`),
    get(`/v1/runs/${id}/trace`),
  ]);
  return {
    format: 'baton.run-export',
    version: 1,
    exported_at: new Date().toISOString(),
    run,
    events,
    steps: steps.steps,
    tool_calls: toolCalls.tool_calls,
    approvals: approvals.approvals,
    trace: { steps: trace.steps, spans: trace.spans },
  };
}

/**
 * Saves `value` as a JSON file through the browser's download (no request leaves the page).
 * @param {string} name
 * @param {unknown} value
 */
export function download(name, value) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' }));
  const link = h('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/**
 * Shell commands that fetch the run: curl against the API, and the baton CLI. The CLI is named by
 * its package (`npx -p baton-runtime baton`): a bare `npx baton` outside an application that
 * installed Baton would run an unrelated npm package called `baton`.
 * @param {string} runId
 */
export function commandsFor(runId) {
  const origin = location.origin;
  const auth = getToken() ? ` -H "Authorization: Bearer $BATON_TOKEN"` : '';
  const token = getToken() ? ' --token "$BATON_TOKEN"' : '';
  const id = encodeURIComponent(runId);
  return {
    curl: [
      `curl -s${auth} ${origin}/v1/runs/${id}`,
      `curl -s${auth} ${origin}/v1/runs/${id}/tool-calls`,
      `curl -sN${auth} "${origin}/v1/runs/${id}/events?after=0"`,
    ].join('\n'),
    baton: [
      `npx -p baton-runtime baton show ${runId} --url ${origin}${token}`,
      `npx -p baton-runtime baton events ${runId} --url ${origin}${token}`,
    ].join('\n'),
  };
}

/**
 * Copies text to the clipboard; where the browser refuses, the text is selected for Ctrl-C.
 * @param {string} text
 * @param {HTMLElement} shownIn
 */
export async function copy(text, shownIn) {
  try {
    await navigator.clipboard.writeText(text);
    shownIn.dataset.copied = 'true';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(shownIn);
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
  }
}
