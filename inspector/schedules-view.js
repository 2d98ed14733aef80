// @ts-check
/**
 * The schedules (`#/schedules`): each with when it ticks, its next tick, its last run (a link to
 * it) and what its ticks started, read again every second; Pause or Resume, Run now (a run at
 * once, opened), and Delete (asked first). Schedules are made with the API or `baton schedules`.
 */
import { ApiError, get, post, request } from './api.js';
import { h, fill } from './dom.js';
import { age, dateTime } from './format.js';
import { showError } from './notices.js';

const REFRESH_MS = 1_000;
const COLUMNS = ['Schedule', 'Status', 'When', 'Input', 'Next tick', 'Last run', 'Runs', 'Skipped', ''];

/** @typedef {import('./types.js').ScheduleJson} ScheduleJson */

/** When a schedule ticks, in a few words. @param {ScheduleJson} s */
function whenOf(s) {
  if (s.cron) return `cron ${s.cron}${s.timezone ? ` (${s.timezone})` : ''}`;
  if (s.every) {
    for (const [unit, size] of /** @type {const} */ ([
      ['d', 86_400_000],
      ['h', 3_600_000],
      ['min', 60_000],
    ])) {
      if (s.every % size === 0) return `every ${s.every / size} ${unit}`;
    }
    return `every ${s.every / 1_000} s`;
  }
  return `once at ${s.at === null ? '?' : dateTime(s.at)}`;
}

/**
 * Mounts the schedules into `root`; the returned function unmounts it.
 * @param {HTMLElement} root
 * @returns {() => void}
 */
export function mountSchedulesView(root) {
  const body = h('tbody', { 'data-testid': 'schedules-body' });
  fill(
    root,
    h(
      'section',
      { class: 'runs' },
      h('div', { class: 'toolbar' }, h('h2', {}, 'Schedules'), h('a', { href: '#/' }, '← Runs')),
      h('table', { class: 'runs-table' }, h('thead', {}, h('tr', {}, ...COLUMNS.map((t) => h('th', {}, t)))), body),
      h(
        'p',
        { class: 'muted' },
        'Made with POST /v1/schedules or baton schedules create; ticked by the servers and workers that drive runs.',
      ),
    ),
  );
  let gone = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  /** @param {string} id @param {string} action */
  async function act(id, action) {
    const path = `/v1/schedules/${encodeURIComponent(id)}`;
    try {
      if (action === 'delete') {
        if (!confirm(`Delete schedule ${id}? Its runs stay.`)) return;
        await request('DELETE', path);
      } else if (action === 'trigger') {
        const run = await post(`${path}/trigger`);
        location.hash = `#/runs/${encodeURIComponent(run.id)}`;
        return;
      } else {
        await post(`${path}/${action}`);
      }
    } catch (error) {
      showError(error);
    }
    await load();
  }

  /** @param {ScheduleJson} s */
  function row(s) {
    const toggle = s.status === 'paused' ? 'resume' : 'pause';
    return h(
      'tr',
      { 'data-testid': 'schedule-row', 'data-id': s.id, 'data-status': s.status },
      h('td', {}, h('code', {}, s.id)),
      h('td', {}, h('span', { class: `badge status-${s.status}` }, s.status)),
      h('td', {}, whenOf(s)),
      h('td', { class: 'input' }, s.input),
      h('td', { 'data-testid': 'schedule-next' }, s.next_at === null ? '—' : dateTime(s.next_at)),
      h(
        'td',
        {},
        s.last_run_id
          ? h(
              'a',
              { href: `#/runs/${encodeURIComponent(s.last_run_id)}`, 'data-testid': 'schedule-last-run' },
              s.last_tick_at ? age(s.last_tick_at) : 'run',
            )
          : '—',
      ),
      h('td', { 'data-testid': 'schedule-runs' }, String(s.runs)),
      h('td', {}, String(s.skipped)),
      h(
        'td',
        { class: 'actions' },
        s.status === 'done'
          ? ''
          : h(
              'button',
              { type: 'button', 'data-testid': `schedule-${toggle}`, onclick: () => void act(s.id, toggle) },
              toggle === 'pause' ? 'Pause' : 'Resume',
            ),
        h(
          'button',
          { type: 'button', 'data-testid': 'schedule-trigger', onclick: () => void act(s.id, 'trigger') },
          'Run now',
        ),
        h(
          'button',
          { type: 'button', 'data-testid': 'schedule-delete', onclick: () => void act(s.id, 'delete') },
          'Delete',
        ),
      ),
    );
  }

  async function load() {
    clearTimeout(timer);
    try {
      const { schedules } = /** @type {{ schedules: ScheduleJson[] }} */ (await get('/v1/schedules'));
      if (gone) return;
      const rows = schedules.map(row);
      fill(
        body,
        ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: COLUMNS.length, class: 'muted' }, 'No schedules.'))]),
      );
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 0) showError(error);
    }
    if (!gone) timer = setTimeout(() => void load(), REFRESH_MS);
  }

  void load();
  return () => {
    gone = true;
    clearTimeout(timer);
  };
}
