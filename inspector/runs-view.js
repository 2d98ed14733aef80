// @ts-check
/**
 * The runs list: one page of `GET /v1/runs` at a time (50 rows, cursor paging), filtered by
 * status and session, kept live by the one stream of every run's state changes (`/v1/events`):
 * a changed row is patched at once and the page is reloaded, at most a few times a second, for
 * usage and new runs. However many runs the server holds, the page keeps one stream open.
 */
import { get } from './api.js';
import { h, fill } from './dom.js';
import { age, count, money, oneLine } from './format.js';
import { openStream } from './stream.js';
import { showConnection, showError } from './notices.js';

const PAGE = 50;
const STATUSES = ['', 'queued', 'pending', 'planning', 'executing', 'waiting_human', 'succeeded', 'failed'];
const RELOAD_MS = 300;
const COLUMNS = ['Run', 'Input', 'Status', 'Session', 'Age', 'Steps', 'LLM calls', 'Tool calls', 'Tokens', 'Cost'];

/** @typedef {import('./types.js').RunJson} RunJson */

/** @typedef {{ status?: string, session?: string, tag?: string, metadata?: string }} RunsFilters */

/**
 * Mounts the list into `root`; the returned function unmounts it (closes its stream and timers).
 * @param {HTMLElement} root
 * @param {RunsFilters} filters from the URL
 * @param {(filters: RunsFilters) => void} onFilters
 * @returns {() => void}
 */
export function mountRunsView(root, filters, onFilters) {
  const tag = h('input', {
    'data-testid': 'filter-tag',
    'aria-label': 'Tag',
    placeholder: 'tag',
    value: filters.tag ?? '',
  });
  // One metadata entry, `key=value`: the runs started with it.
  const metadata = h('input', {
    'data-testid': 'filter-metadata',
    'aria-label': 'Metadata',
    placeholder: 'key=value',
    value: filters.metadata ?? '',
  });
  const current = () => ({
    status: status.value,
    session: session.value.trim(),
    tag: tag.value.trim(),
    metadata: metadata.value.trim(),
  });
  const status = h('select', { 'data-testid': 'filter-status', 'aria-label': 'Status' });
  for (const value of STATUSES) status.append(h('option', { value }, value || 'any status'));
  status.value = filters.status ?? '';
  const session = h('input', {
    'data-testid': 'filter-session',
    'aria-label': 'Session',
    placeholder: 'session id',
    value: filters.session ?? '',
  });
  const body = h('tbody', { 'data-testid': 'runs-body' });
  const pageInfo = h('span', { class: 'muted', 'data-testid': 'page-info' });
  const prev = h('button', { type: 'button', 'data-testid': 'page-prev' }, '← Newer');
  const next = h('button', { type: 'button', 'data-testid': 'page-next' }, 'Older →');
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (e) => (e.preventDefault(), onFilters(current())),
    },
    h('label', {}, 'Status ', status),
    h('label', {}, 'Session ', session),
    h('label', {}, 'Tag ', tag),
    h('label', {}, 'Metadata ', metadata),
    h('button', { type: 'submit' }, 'Filter'),
  );
  status.addEventListener('change', () => onFilters(current()));
  fill(
    root,
    h(
      'section',
      { class: 'runs' },
      h('div', { class: 'toolbar' }, h('h2', {}, 'Runs'), form),
      h('table', { class: 'runs-table' }, h('thead', {}, h('tr', {}, ...COLUMNS.map((t) => h('th', {}, t)))), body),
      h('div', { class: 'pager' }, prev, pageInfo, next),
    ),
  );

  /** Cursors of the pages before this one; the current page's own cursor is last. */
  /** @type {(string | null)[]} */
  const cursors = [null];
  /** @type {string | null} */
  let nextCursor = null;
  /** @type {RunJson[]} */
  let runs = [];
  /** @type {Map<string, HTMLTableRowElement>} */
  const rows = new Map();
  let gone = false;

  function query() {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (filters.status) params.set('status', filters.status);
    if (filters.session) params.set('session_id', filters.session);
    if (filters.tag) params.set('tag', filters.tag);
    const entry = filters.metadata?.indexOf('=') ?? -1;
    if (filters.metadata && entry > 0)
      params.set(`metadata.${filters.metadata.slice(0, entry)}`, filters.metadata.slice(entry + 1));
    const cursor = cursors.at(-1);
    if (cursor) params.set('cursor', cursor);
    return `/v1/runs?${params}`;
  }

  async function load() {
    try {
      const page = await get(query());
      if (gone) return;
      runs = page.runs;
      nextCursor = page.next_cursor;
      render();
    } catch (error) {
      showError(error);
    }
  }

  /** @param {RunJson} run */
  function row(run) {
    const tr = h(
      'tr',
      { 'data-run': run.id, 'data-status': run.status },
      h('td', {}, h('a', { href: `#/runs/${encodeURIComponent(run.id)}`, class: 'mono' }, run.id)),
      // What the run was asked, on one line (the whole input in the tooltip): runs tell apart.
      h(
        'td',
        { class: 'input', 'data-testid': 'run-input', title: oneLine(run.input, 600) },
        oneLine(run.input),
        ...(run.tags ?? []).map((t) => h('span', { class: 'tag', 'data-testid': 'run-tag' }, t)),
      ),
      h(
        'td',
        {},
        h('span', { class: `badge ${run.status}`, 'data-testid': 'run-status' }, run.status.replace('_', ' ')),
      ),
      h('td', { class: 'mono' }, run.session_id ?? ''),
      h('td', { 'data-created': run.created_at, class: 'age' }, age(run.created_at)),
      h('td', { class: 'num' }, count(run.usage.steps)),
      h('td', { class: 'num' }, count(run.usage.llm_calls)),
      h('td', { class: 'num' }, count(run.usage.tool_calls)),
      h('td', { class: 'num' }, count(run.usage.tokens)),
      h('td', { class: 'num' }, money(run.usage.cost_usd)),
    );
    return tr;
  }

  function render() {
    rows.clear();
    const trs = runs.map((run) => {
      const tr = row(run);
      rows.set(run.id, tr);
      return tr;
    });
    fill(body, ...(trs.length ? trs : [h('tr', {}, h('td', { colspan: COLUMNS.length, class: 'muted' }, 'No runs.'))]));
    const n = cursors.length;
    pageInfo.textContent = `page ${n} · ${runs.length} runs`;
    prev.disabled = n === 1;
    next.disabled = nextCursor === null;
  }

  prev.addEventListener('click', () => {
    if (cursors.length > 1) cursors.pop();
    void load();
  });
  next.addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors.push(nextCursor);
    void load();
  });

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let reload;
  const scheduleReload = () => (reload ??= setTimeout(() => ((reload = undefined), void load()), RELOAD_MS));
  const stream = openStream({
    path: '/v1/events',
    resumable: false,
    onEvent(event) {
      const tr = rows.get(event.run_id);
      if (event.type === 'state' && tr) {
        // The status changes at once; usage follows with the reload.
        const to = String(event.data.to);
        tr.dataset.status = to;
        const badge = tr.querySelector('.badge');
        if (badge) {
          badge.className = `badge ${to}`;
          badge.textContent = to.replace('_', ' ');
        }
      }
      // A new run shows on the first page; a change elsewhere may move a run in or out of a filter.
      if (tr || cursors.length === 1) scheduleReload();
    },
    onStatus: showConnection,
    onReopen: () => void load(),
  });
  const ticker = setInterval(() => {
    for (const cell of body.querySelectorAll('td.age')) {
      const created = Number(/** @type {HTMLElement} */ (cell).dataset.created);
      if (created) cell.textContent = age(created);
    }
  }, 5000);
  void load();
  return () => {
    gone = true;
    stream.close();
    clearTimeout(reload);
    clearInterval(ticker);
  };
}
