/** "Did you mean": the known name closest to a mistyped one, for flags and commands. */

/** Edits (insertions, deletions, substitutions, swaps of neighbours) between two strings. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j += 1) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The name among `names` that `typed` most likely meant: one it starts (`--dry` for `--dry-run`)
 * or one at most a third of its length in edits away (at least one, at most two); else undefined.
 */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  const prefixed = names.filter((name) => typed.length >= 2 && name.startsWith(typed));
  if (prefixed.length === 1) return prefixed[0];
  const limit = Math.min(2, Math.max(1, Math.floor(typed.length / 3)));
  let best: { name: string; edits: number } | undefined;
  for (const name of names) {
    const edits = distance(typed, name);
    if (edits <= limit && (!best || edits < best.edits)) best = { name, edits };
  }
  return best?.name;
}
