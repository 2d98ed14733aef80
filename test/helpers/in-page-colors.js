/* global window, getComputedStyle, SVGElement, SVGGraphicsElement, Node */
/**
 * Runs inside the page (installed by `page-colors.ts`): the WCAG 2 contrast ratio of an element's text
 * against what is really behind it. The text's colour is `color` (HTML) or `fill` (SVG); the
 * background is found by walking up the tree through transparent backgrounds, compositing
 * translucent ones, down to the white canvas; an SVG text over a shape (a state's box) has that
 * shape's fill behind it. Opacity on the element or an ancestor fades its text into that
 * background. Kept as plain JS so the page runs exactly this, not a transpiled copy.
 */
(() => {
  /** @param {string} text @returns {number[]} r, g, b (0–255) and alpha (0–1) */
  function parse(text) {
    const m = /rgba?\(([^)]+)\)/.exec(text);
    if (!m) return [0, 0, 0, 0];
    const parts = m[1]
      .split(/[\s,/]+/)
      .filter(Boolean)
      .map(Number);
    return [parts[0], parts[1], parts[2], parts[3] ?? 1];
  }

  /** `top` painted over the opaque `bottom`. */
  function over(top, bottom) {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  }

  function luminance(rgb) {
    const [r, g, b] = rgb.slice(0, 3).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }

  function ratio(a, b) {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  }

  /** The SVG shape drawn before `el` in its group whose box holds `el`'s centre, if any. */
  function shapeBehind(el) {
    if (!(el instanceof SVGGraphicsElement)) return null;
    const box = el.getBBox();
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    for (let prev = el.previousElementSibling; prev; prev = prev.previousElementSibling) {
      if (!(prev instanceof SVGGraphicsElement) || prev.localName === 'text') continue;
      const b = prev.getBBox();
      if (cx >= b.x && cx <= b.x + b.width && cy >= b.y && cy <= b.y + b.height) {
        const fill = parse(getComputedStyle(prev).fill);
        if (fill[3] > 0) return fill;
      }
    }
    return null;
  }

  /** The opaque colour behind `el`'s text. */
  function backgroundOf(el) {
    const layers = [];
    const shape = shapeBehind(el);
    if (shape) layers.push(shape);
    for (let node = shape ? null : el; node && node.nodeType === Node.ELEMENT_NODE; node = node.parentElement) {
      if (node instanceof SVGElement) continue;
      const bg = parse(getComputedStyle(node).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    if (shape) {
      // The shape is opaque: nothing under it shows.
      return shape[3] >= 1 ? shape : over(shape, backgroundOf(el.ownerSVGElement));
    }
    return layers.reduceRight((acc, layer) => over(layer, acc), [255, 255, 255, 1]);
  }

  function opacityOf(el) {
    let opacity = 1;
    for (let node = el; node && node.nodeType === Node.ELEMENT_NODE; node = node.parentElement) {
      opacity *= Number(getComputedStyle(node).opacity);
    }
    return opacity;
  }

  function textColorOf(el) {
    const style = getComputedStyle(el);
    return parse(el instanceof SVGElement ? style.fill : style.color);
  }

  /** The contrast of one element's text: its colours and the ratio. */
  function contrastOf(el) {
    const bg = backgroundOf(el);
    const fg = textColorOf(el);
    const shown = over([fg[0], fg[1], fg[2], fg[3] * opacityOf(el)], bg);
    return {
      ratio: Math.round(ratio(shown, bg) * 100) / 100,
      color: shown.slice(0, 3).map(Math.round),
      background: bg.slice(0, 3).map(Math.round),
    };
  }

  /** The contrast of a non-text mark (an outline) of `color` against what is behind `el`. */
  function markContrast(color, el) {
    const bg = backgroundOf(el.parentElement ?? el);
    return Math.round(ratio(over(parse(color), bg), bg) * 100) / 100;
  }

  /** A short name of an element, for failure messages. */
  function describe(el) {
    const cls = typeof el.className === 'string' ? el.className : (el.getAttribute('class') ?? '');
    const text = (el.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return `${el.localName}${cls ? `.${cls.trim().split(/\s+/).join('.')}` : ''} "${text}"`;
  }

  /**
   * Every element under `root` that shows text of its own (a non-blank text node child), is
   * rendered, and is not a disabled control (WCAG exempts inactive components).
   */
  function textElements(root) {
    const found = [];
    for (const el of root.querySelectorAll('*')) {
      const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '');
      if (!own || el.closest('title, option, script, style, [hidden]')) continue;
      if (el.closest(':disabled')) continue;
      if (el.getClientRects().length === 0 || getComputedStyle(el).visibility !== 'visible') continue;
      found.push(el);
    }
    return found;
  }

  window.batonColors = { contrastOf, markContrast, describe, textElements, parse };
})();
