// @ts-check
/**
 * Live event streams that heal themselves. A browser's EventSource cannot send headers and, on
 * its own reconnect, reuses the old URL (and its ticket, which expires after a minute); a 401 or
 * 204 closes it for good. So this closes it at the first error and opens a new one itself: a
 * fresh ticket, and `?after=<last seq>` so the server replays exactly what was missed. Events
 * already seen (seq <= last) are dropped, so none is delivered twice.
 */
import { getToken, post } from './api.js';
import { EVENT_NAMES } from './event-names.js';

const RETRY_MS = [250, 500, 1000, 2000, 4000];

/**
 * @typedef {{
 *   close(): void,
 *   readonly status: 'connecting' | 'live' | 'reconnecting' | 'ended',
 * }} LiveStream
 */

/**
 * Follows a stream until `close()` or until `isEnd` says an event was the last.
 * @param {{
 *   path: string,
 *   after?: number,
 *   resumable: boolean,
 *   onEvent: (event: import('./types.js').EventJson) => void,
 *   onStatus?: (status: LiveStream['status'], detail?: string) => void,
 *   onReopen?: () => void,
 *   isEnd?: (event: import('./types.js').EventJson) => boolean,
 * }} options `resumable` streams carry seqs (a run's); the others (every run's) restart live, and
 *   `onReopen` lets the caller reload what it may have missed.
 * @returns {LiveStream}
 */
export function openStream(options) {
  let last = options.after ?? 0;
  /** @type {EventSource | undefined} */
  let source;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let attempt = 0;
  let opened = false;
  /** @type {LiveStream['status']} */
  let status = 'connecting';
  const setStatus = (/** @type {LiveStream['status']} */ next, /** @type {string} */ detail = '') => {
    status = next;
    options.onStatus?.(next, detail);
  };

  /** True once closed (a function, so the check is not narrowed away across awaits). */
  const ended = () => status === 'ended';

  async function connect() {
    timer = undefined;
    if (ended()) return;
    const params = new URLSearchParams();
    if (options.resumable) params.set('after', String(last));
    try {
      if (getToken()) params.set('ticket', (await post('/v1/tickets')).ticket);
    } catch (error) {
      retry(error instanceof Error ? error.message : String(error));
      return;
    }
    if (ended()) return;
    const es = new EventSource(`${options.path}?${params}`);
    source = es;
    es.onopen = () => {
      attempt = 0;
      setStatus('live');
      if (opened) options.onReopen?.();
      opened = true;
    };
    for (const name of EVENT_NAMES) {
      es.addEventListener(name, (message) => {
        const event = JSON.parse(/** @type {MessageEvent} */ (message).data);
        if (options.resumable && name !== 'draft') {
          if (event.seq <= last) return;
          last = event.seq;
        }
        options.onEvent(event);
        if (options.isEnd?.(event)) close();
      });
    }
    // The server's own `event: error` frame (it is closing, or the client lagged) says why.
    es.addEventListener('error', (message) => {
      const data = /** @type {MessageEvent} */ (message).data;
      const why = typeof data === 'string' ? (JSON.parse(data).error?.message ?? 'stream error') : 'connection lost';
      es.close();
      if (source === es) retry(why);
    });
  }

  /** @param {string} why */
  function retry(why) {
    if (status === 'ended' || timer !== undefined) return;
    setStatus('reconnecting', why);
    const delay = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)] ?? 4000;
    attempt += 1;
    timer = setTimeout(() => void connect(), delay);
  }

  function close() {
    setStatus('ended');
    clearTimeout(timer);
    source?.close();
  }

  void connect();
  return {
    close,
    get status() {
      return status;
    },
  };
}
