// @ts-check
/**
 * Building the page's elements. Text always goes in as text (never as HTML), so a run's input,
 * a tool's arguments or a model's answer cannot inject markup; no inline style attributes either
 * (the Content-Security-Policy forbids them). Bidirectional controls in any text are shown as
 * markers, never applied (see `bidi.js`): every text on the page goes through here.
 */
import { bidiMarker, hasBidiControls, markBidi, splitBidi } from './bidi.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** @typedef {string | number | Node | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | null | undefined | EventListener>} Attrs */

/** Attributes a person reads (tooltips, labels): their bidirectional controls are marked too. */
const SHOWN_ATTRS = new Set(['title', 'aria-label', 'placeholder', 'alt']);

/** Elements whose content is plain text, not elements. */
const TEXT_ONLY = new Set(['title', 'option', 'textarea']);

/**
 * @param {Element} element
 * @param {Attrs} attrs
 */
function setAttrs(element, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (SHOWN_ATTRS.has(name)) element.setAttribute(name, markBidi(String(value)));
    else element.setAttribute(name, value === true ? '' : String(value));
  }
}

/**
 * @param {Element} element
 * @param {Child[]} children
 */
function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (typeof child === 'object') element.append(child);
    else element.append(...textNodes(String(child), element));
  }
}

/**
 * A text as nodes: plain text, with each bidirectional control replaced by a visible marker (a
 * `span`, or a `tspan` inside SVG) that names it.
 * @param {string} text
 * @param {Element} parent
 * @returns {Node[]}
 */
function textNodes(text, parent) {
  if (!hasBidiControls(text)) return [document.createTextNode(text)];
  // Elements that hold text only (a tooltip, an option) get the markers as plain text.
  if (TEXT_ONLY.has(parent.localName)) return [document.createTextNode(markBidi(text))];
  const svg = parent.namespaceURI === SVG_NS;
  return splitBidi(text).map((part) => {
    if (typeof part === 'string') return document.createTextNode(part);
    const marker = svg ? document.createElementNS(SVG_NS, 'tspan') : document.createElement('span');
    marker.setAttribute('class', 'bidi-control');
    marker.setAttribute('data-bidi', part.code);
    if (!svg) marker.setAttribute('title', `${part.name} (${part.code}): shown here, not applied`);
    marker.textContent = bidiMarker(part);
    return marker;
  });
}

/**
 * An HTML element: `h('button', { class: 'primary', onclick: go }, 'Approve')`.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  setAttrs(element, attrs);
  append(element, children);
  return element;
}

/**
 * An SVG element.
 * @param {string} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {SVGElement}
 */
export function s(tag, attrs = {}, ...children) {
  const element = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  setAttrs(element, attrs);
  append(element, children);
  return element;
}

/**
 * Replaces an element's children. A control inside that has the keyboard focus is focused again
 * in the new children (the same kind, label and text), so a person tabbing through a run's
 * approval is not thrown back to the page's start each time the view redraws.
 * @param {Element} element
 * @param {...Child} children
 */
export function fill(element, ...children) {
  const focused = typeof document === 'undefined' ? null : document.activeElement;
  const key = focused && focused !== document.body && element.contains(focused) ? focusKey(focused) : null;
  element.replaceChildren();
  append(element, children);
  if (key !== null) {
    const again = [...element.querySelectorAll(FOCUSABLE)].find((candidate) => focusKey(candidate) === key);
    if (again instanceof HTMLElement) again.focus();
  }
  return element;
}

const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

/** What tells a control from its siblings across a redraw. @param {Element} el */
function focusKey(el) {
  const attrs = ['data-testid', 'data-tab', 'data-decision', 'name', 'aria-label', 'href'];
  return [el.tagName, ...attrs.map((name) => el.getAttribute(name) ?? ''), (el.textContent ?? '').trim()].join(
    '\u0000',
  );
}
