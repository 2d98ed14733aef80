/** Guards as readable names: `isLoop`, and composed ones as `and(isPendingApproval, isLastStep)`. */

// XState 5's `and`/`or`/`not` return a function carrying `check` and `guards`; the check's name
// tells which combinator it is.
const COMBINATORS: Readonly<Record<string, string>> = { checkAnd: 'and', checkOr: 'or', checkNot: 'not' };

/** The name of a transition's guard (null when it has none); composed guards name every part. */
export function describeGuard(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const parts = (guard as { guards?: unknown }).guards;
    const check = (guard as { check?: { name?: string } }).check;
    if (Array.isArray(parts)) {
      const combinator = COMBINATORS[check?.name ?? ''] ?? 'and';
      return `${combinator}(${parts.map((part) => describeGuard(part) ?? '?').join(', ')})`;
    }
    return guard.name ? `inline:${guard.name}` : 'inline';
  }
  if (typeof guard === 'object' && 'type' in guard) return String((guard as { type: unknown }).type);
  return 'unknown';
}

/** Every named guard a description uses, composed ones taken apart: `and(a, not(b))` → a, b. */
export function guardNames(description: string | null): string[] {
  if (description === null) return [];
  return description.split(/[(),\s]+/).filter((name) => name !== '' && !(name in { and: 1, or: 1, not: 1 }));
}
