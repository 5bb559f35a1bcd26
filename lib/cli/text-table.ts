/** Plain-text columns for terminal output: left-aligned, two spaces apart, no trailing blanks. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  // Widths by a loop, not Math.max(...rows): a dry run can list more rows than a call takes arguments.
  const widths = header.map((h) => h.length);
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}
