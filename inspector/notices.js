// @ts-check
/**
 * Errors and connection state, shown on the page: an API error is never swallowed. Each error
 * names its HTTP status and failure code (`403 auth.forbidden: 'viewer' lacks the role
 * 'approve'`) and stays until dismissed.
 */
import { ApiError } from './api.js';
import { fill, h } from './dom.js';

/** @returns {HTMLElement} */
function area() {
  const found = document.getElementById('notices');
  if (found) return found;
  const created = h('div', { id: 'notices', 'aria-live': 'polite' });
  document.body.append(created);
  return created;
}

/** The text an error is shown with. @param {unknown} error */
export function describeError(error) {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Shows an error until it is dismissed (or replaced by the same one).
 * @param {unknown} error
 * @param {HTMLElement} [where] a place next to what failed; the page's notice area otherwise
 */
export function showError(error, where) {
  const text = describeError(error);
  const target = where ?? area();
  for (const old of target.querySelectorAll('.error')) if (old.getAttribute('data-text') === text) old.remove();
  const code = error instanceof ApiError ? error.failure.code : 'error';
  const notice = h(
    'div',
    { class: 'error', role: 'alert', 'data-text': text, 'data-code': code },
    h('span', {}, text),
    h('button', { type: 'button', class: 'link', 'aria-label': 'Dismiss', onclick: () => notice.remove() }, '×'),
  );
  target.append(notice);
  return notice;
}

/**
 * The connection indicator in the header.
 * @param {'connecting' | 'live' | 'reconnecting' | 'ended'} status
 * @param {string} [detail]
 */
export function showConnection(status, detail = '') {
  const dot = document.getElementById('connection');
  if (!dot) return;
  dot.dataset.status = status;
  fill(dot, status === 'reconnecting' ? `reconnecting… ${detail}` : status);
}
