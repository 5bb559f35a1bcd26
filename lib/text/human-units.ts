/** Numbers as the CLI prints them for people: byte sizes and runs of versions. */

/** 512 → "512 B", 1536 → "1.5 KiB", up to TiB; null (a size the format does not know) → "? B". */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return "? B";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** 1 → "1 deletion file", 3 → "3 deletion files"; null (a count the format does not know) → "? deletion files". */
export function plural(count: number | null, noun: string): string {
  if (count === null) return `? ${noun}s`;
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Ascending versions as runs: 1, 2, 3, 5, 7, 8, 9 → "1-3, 5, 7-9"; none → "none". */
export function versionRanges(versions: readonly number[]): string {
  if (versions.length === 0) return "none";
  const parts: string[] = [];
  let start = versions[0]!;
  let previous = start;
  for (const version of [...versions.slice(1), NaN]) {
    if (version === previous + 1) {
      previous = version;
      continue;
    }
    parts.push(start === previous ? String(start) : `${start}-${previous}`);
    start = previous = version;
  }
  return parts.join(", ");
}
