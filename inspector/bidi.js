// @ts-check
/**
 * Bidirectional control characters in a run's text (its input, a tool's arguments, a model's
 * answer) are shown, never applied. An override such as U+202E reverses what follows it, so
 * `report‮fdp.exe` would read "reportexe.pdf" to the person approving the call; isolating it
 * would only keep the reversal inside the field. So each one is replaced by a visible marker,
 * `⟨U+202E⟩`, and the text around it reads in the order it is stored. Pure: no DOM.
 */

/** The marks, embeddings, overrides and isolates of Unicode's bidirectional algorithm. */
export const BIDI_CONTROLS = /** @type {const} */ ({
  '\u061C': 'ARABIC LETTER MARK',
  '\u200E': 'LEFT-TO-RIGHT MARK',
  '\u200F': 'RIGHT-TO-LEFT MARK',
  '\u202A': 'LEFT-TO-RIGHT EMBEDDING',
  '\u202B': 'RIGHT-TO-LEFT EMBEDDING',
  '\u202C': 'POP DIRECTIONAL FORMATTING',
  '\u202D': 'LEFT-TO-RIGHT OVERRIDE',
  '\u202E': 'RIGHT-TO-LEFT OVERRIDE',
  '\u2066': 'LEFT-TO-RIGHT ISOLATE',
  '\u2067': 'RIGHT-TO-LEFT ISOLATE',
  '\u2068': 'FIRST STRONG ISOLATE',
  '\u2069': 'POP DIRECTIONAL ISOLATE',
});

const PATTERN = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const PATTERN_ALL = new RegExp(PATTERN.source, 'g');

/** @typedef {{ code: string, name: string }} BidiControl `code` as `U+202E` */

/** True when `text` holds a bidirectional control. @param {string} text */
export function hasBidiControls(text) {
  return PATTERN.test(text);
}

/** @param {string} char @returns {BidiControl} */
function controlOf(char) {
  const code = `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  return { code, name: BIDI_CONTROLS[/** @type {keyof typeof BIDI_CONTROLS} */ (char)] ?? code };
}

/**
 * The text cut at its bidirectional controls: plain runs of text, and a control in their place.
 * @param {string} text
 * @returns {(string | BidiControl)[]}
 */
export function splitBidi(text) {
  /** @type {(string | BidiControl)[]} */
  const parts = [];
  let from = 0;
  for (const match of text.matchAll(PATTERN_ALL)) {
    if (match.index > from) parts.push(text.slice(from, match.index));
    parts.push(controlOf(match[0]));
    from = match.index + match[0].length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/** The marker a control is shown as. @param {BidiControl} control */
export function bidiMarker(control) {
  return `⟨${control.code}⟩`;
}

/**
 * Plain text with each control replaced by its marker, for places that hold no markup (a
 * tooltip, a label).
 * @param {string} text
 */
export function markBidi(text) {
  return text.replace(PATTERN_ALL, (char) => bidiMarker(controlOf(char)));
}
