/**
 * Paths with a segment starting with "_" or "." below the table root are hidden from Iceberg's
 * orphan removal and never candidates (Hadoop `.crc` files, `_SUCCESS`, lakewarden's own
 * `_lakewarden/`), except partition folders (`_col=value`), as in iceberg-java's
 * DeleteOrphanFilesSparkAction (iceberg.md §4).
 */
export function isHiddenKey(key: string): boolean {
  return key.split("/").some((segment) => (segment.startsWith("_") || segment.startsWith(".")) && !segment.includes("="));
}
