/**
 * Text that enters a run must be well-formed UTF-16: a lone surrogate (half of an emoji, from a
 * client's bad slicing) cannot be stored as it is (SQLite and PostgreSQL store UTF-8, where it
 * becomes U+FFFD), so the run would no longer hold what the client sent, and the same request
 * sent again would not match itself. Such text is refused, naming where it is.
 */
import { fail } from '../../failure.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string (or key) in `value` that holds a lone surrogate, or null. */
export function illFormedPath(value: unknown, path = '$'): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = illFormedPath(item, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) return `${path} (a key)`;
      const found = illFormedPath(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return null;
}

/** Throws `input.invalid` when `value` holds ill-formed text; `what` names it in the message. */
export function assertWellFormed(value: unknown, what: string): void {
  const path = illFormedPath(value);
  if (path === null) return;
  fail('input.invalid', `${what} holds ill-formed text (a lone UTF-16 surrogate) at ${path}`, {
    details: { path },
  });
}
