// @ts-check
/**
 * Taking a run away from the page: one JSON file with everything the API knows of it (run,
 * events, steps, ledger, approvals, trace), and the commands that fetch the same from a shell.
 */
import { get, getToken } from './api.js';
import { fill, h } from './dom.js';
import { showError } from './notices.js';

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

/**
 * The run view's export and shell-command buttons: the export downloads the run's JSON; each
 * command button shows its command and copies it.
 * @param {{ export: HTMLButtonElement, curl: HTMLButtonElement, baton: HTMLButtonElement }} buttons
 * @param {{ commands: HTMLElement, errors: HTMLElement }} el
 * @param {string} runId
 * @param {import('./types.js').EventJson[]} events the events on the page (read when clicked)
 */
export function wireExportButtons(buttons, el, runId, events) {
  const doExport = async () => {
    try {
      download(`${runId}.json`, await exportRun(runId, events));
    } catch (error) {
      showError(error, el.errors);
    }
  };
  buttons.export.addEventListener('click', () => void doExport());
  /** @param {'curl' | 'baton'} kind */
  const showCommands = async (kind) => {
    const text = commandsFor(runId)[kind];
    el.commands.hidden = false;
    fill(el.commands, text);
    el.commands.dataset.kind = kind;
    await copy(text, el.commands);
  };
  buttons.curl.addEventListener('click', () => void showCommands('curl'));
  buttons.baton.addEventListener('click', () => void showCommands('baton'));
}
