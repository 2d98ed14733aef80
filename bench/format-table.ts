/** A plain-text table: a header row, a rule, then rows; the first column left-aligned, the rest right-aligned. */

/** Formats rows of cells as an aligned table. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, i) => Math.max(width(cell), ...rows.map((row) => width(row[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat((widths[i] ?? 0) - width(cell));
        return i === 0 ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Display width: code points, so ✓, ✗, ≥ and × count as one column each. */
function width(text: string): number {
  return [...text].length;
}

/** A number with thousands separators and a fixed number of decimals. */
export function formatNumber(value: number, decimals = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}
