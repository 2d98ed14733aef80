// @ts-check
/** How numbers, times and values read on the page. */

/** @param {number} ms */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
  return `${Math.floor(ms / 86_400_000)} d ${Math.round((ms % 86_400_000) / 3_600_000)} h`;
}

/** How long ago `at` was, in words. @param {number} at @param {number} [now] */
export function age(at, now = Date.now()) {
  const ms = Math.max(0, now - at);
  return ms < 5000 ? 'just now' : `${duration(ms).replace(/\.\d+ s$/, ' s')} ago`;
}

/** Wall-clock time with milliseconds. @param {number} at */
export function clock(at) {
  const d = new Date(at);
  const pad = (/** @type {number} */ n, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** @param {number} at */
export function dateTime(at) {
  return new Date(at).toLocaleString();
}

/** US dollars, with enough digits for per-call model costs. @param {number} usd */
export function money(usd) {
  return usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toFixed(5)}` : `$${usd.toFixed(2)}`;
}

/** @param {number} n */
export function count(n) {
  return n.toLocaleString('en-US');
}

/** One line of JSON, cut to `max` characters. @param {unknown} value @param {number} [max] */
export function brief(value, max = 120) {
  const text = JSON.stringify(value ?? null) ?? 'null';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Indented JSON for a payload shown on demand. @param {unknown} value */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

// eslint-disable-next-line no-control-regex -- control characters are what `oneLine` makes visible
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A text on one short line: whitespace runs become one space, other control characters show as
 * `⟨U+001B⟩`, and a long text is cut to `max` characters. Bidirectional controls are left for
 * the page to mark (see `dom.js`). @param {string} text @param {number} [max]
 */
export function oneLine(text, max = 80) {
  const flat = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(CONTROLS, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
