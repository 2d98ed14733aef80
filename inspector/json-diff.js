// @ts-check
/**
 * What changed between two JSON values, as a list a person reads before approving an edit: each
 * entry a path (`files[1]`, `to.name`), and the value removed, added or changed there. Arrays
 * are matched by their longest common subsequence, so dropping one file of a list reads as that
 * file removed, not as every later one changed; and the JSON a person edits, which reads back as
 * exactly the value it shows. Pure: no DOM (tests import it).
 */

import { BIDI_CONTROLS } from './bidi.js';

/** @typedef {{ path: string, kind: 'added' | 'removed' | 'changed', before?: unknown, after?: unknown }} Change */

/** Arrays longer than this are compared index by index (the LCS table grows as the square). */
const MAX_LCS = 400;

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** @param {unknown} a @param {unknown} b */
export function sameJson(a, b) {
  return canonical(a) === canonical(b);
}

/** JSON with object keys sorted, so two equal values give the same text. @param {unknown} value @returns {string} */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** @param {string} base @param {string} key */
function keyPath(base, key) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? (base ? `${base}.${key}` : key) : `${base}[${JSON.stringify(key)}]`;
}

/**
 * The changes from `before` to `after` (empty when they are equal).
 * @param {unknown} before
 * @param {unknown} after
 * @param {string} [path]
 * @returns {Change[]}
 */
export function diffJson(before, after, path = '') {
  if (sameJson(before, after)) return [];
  if (Array.isArray(before) && Array.isArray(after)) return diffArrays(before, after, path);
  if (isObject(before) && isObject(after)) {
    /** @type {Change[]} */
    const changes = [];
    for (const key of Object.keys(before)) {
      const at = keyPath(path, key);
      if (!(key in after)) changes.push({ path: at, kind: 'removed', before: before[key] });
      else changes.push(...diffJson(before[key], after[key], at));
    }
    for (const key of Object.keys(after)) {
      if (!(key in before)) changes.push({ path: keyPath(path, key), kind: 'added', after: after[key] });
    }
    return changes;
  }
  return [{ path, kind: 'changed', before, after }];
}

/**
 * @param {unknown[]} before
 * @param {unknown[]} after
 * @param {string} path
 * @returns {Change[]}
 */
function diffArrays(before, after, path) {
  if (before.length > MAX_LCS || after.length > MAX_LCS) return diffByIndex(before, after, path);
  const a = before.map(canonical);
  const b = after.map(canonical);
  const width = b.length + 1;
  // at(i, j): the length of the longest common subsequence of a[i..] and b[j..].
  const table = new Int32Array((a.length + 1) * width);
  const at = (/** @type {number} */ i, /** @type {number} */ j) => table[i * width + j] ?? 0;
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i * width + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  /** @type {Change[]} */
  const changes = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i += 1;
      j += 1;
    } else if (i < a.length && j < b.length && at(i + 1, j + 1) === at(i, j)) {
      // Neither side is kept here: the element in place changed (compared inside, when both are objects).
      changes.push(...diffJson(before[i], after[j], `${path}[${j}]`));
      i += 1;
      j += 1;
    } else if (j >= b.length || (i < a.length && at(i + 1, j) >= at(i, j + 1))) {
      changes.push({ path: `${path}[${i}]`, kind: 'removed', before: before[i] });
      i += 1;
    } else {
      changes.push({ path: `${path}[${j}]`, kind: 'added', after: after[j] });
      j += 1;
    }
  }
  return changes;
}

/** @param {unknown[]} before @param {unknown[]} after @param {string} path @returns {Change[]} */
function diffByIndex(before, after, path) {
  /** @type {Change[]} */
  const changes = [];
  const n = Math.max(before.length, after.length);
  for (let k = 0; k < n; k += 1) {
    const at = `${path}[${k}]`;
    if (k >= after.length) changes.push({ path: at, kind: 'removed', before: before[k] });
    else if (k >= before.length) changes.push({ path: at, kind: 'added', after: after[k] });
    else changes.push(...diffJson(before[k], after[k], at));
  }
  return changes;
}

const BIDI = new RegExp(`[${Object.keys(BIDI_CONTROLS).join('')}]`, 'g');

/**
 * A value as JSON a person edits: indented, each bidirectional control written as its escape
 * (`\u202e`), so it shows for what it is and reads back as the same character. (The page's
 * markers would read back as other text.)
 * @param {unknown} value
 */
export function editableJson(value) {
  return JSON.stringify(value, null, 2).replace(
    BIDI,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}
