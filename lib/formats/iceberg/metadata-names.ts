/**
 * Names of Iceberg table metadata files under `metadata/` (iceberg.md §1):
 *   - file-system ("Hadoop") tables: `v<N>.metadata.json`, and `metadata/version-hint.text`
 *     holding N (BigQuery writes `v<epoch>`);
 *   - catalog tables: `<NNNNN>-<uuid>.metadata.json` (the number before the first "-");
 *   - gzip: `<name>.gz.metadata.json` (Java, pyiceberg) and the legacy `<name>.metadata.json.gz`.
 * Anything else ending in `.metadata.json` (`<uuid>.metadata.json`, the temp file of a Hadoop
 * commit that never got renamed) is not a version of the table by its name alone: orphan removal
 * judges it. Such a name ("other", no sequence: `vfinal.metadata.json`) is still table metadata when
 * the caller names it (`--metadata-location`, a catalog) or the version hint does (some writers store
 * a file stem there, not a number).
 */
export const METADATA_PREFIX = "metadata/";
export const DATA_PREFIX = "data/";
export const VERSION_HINT_KEY = "metadata/version-hint.text";

export type MetadataNaming = "hadoop" | "catalog";

/** A version name: `vN` or `NNNNN-uuid`. */
export interface SequencedMetadataName {
  /** The metadata file's sequence: N of `vN`, or NNNNN of `NNNNN-uuid`. */
  sequence: number;
  naming: MetadataNaming;
  gzip: boolean;
}

/** Any other metadata file name (`vfinal.metadata.json`): table metadata only when named as such. */
export interface OtherMetadataName {
  sequence: null;
  naming: "other";
  gzip: boolean;
}

export type MetadataFileName = SequencedMetadataName | OtherMetadataName;

const HADOOP = /^v(\d+)$/;
/**
 * The number, "-", then a whole UUID. Not looser: a failed Hadoop commit leaves
 * `<uuid>.metadata.json`, and a UUID whose first group is all digits (`12345678-...`) must not
 * read as metadata file number 12345678.
 */
const CATALOG = /^(\d+)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The stem of a metadata JSON file name and whether it is gzip, or null for another name. */
function metadataStem(name: string): { stem: string; gzip: boolean } | null {
  for (const [suffix, gzip] of [
    [".gz.metadata.json", true],
    [".metadata.json.gz", true],
    [".metadata.json", false],
  ] as const) {
    if (name.endsWith(suffix) && name.length > suffix.length) return { stem: name.slice(0, -suffix.length), gzip };
  }
  return null;
}

/** Parses a file name (no folder); null when it is not a table metadata version name (vN, NNNNN-uuid). */
export function parseMetadataFileName(name: string): SequencedMetadataName | null {
  const parts = metadataStem(name);
  if (!parts) return null;
  const { stem, gzip } = parts;
  const hadoop = HADOOP.exec(stem);
  const catalog = hadoop ? null : CATALOG.exec(stem);
  const digits = hadoop?.[1] ?? catalog?.[1];
  if (digits === undefined) return null;
  const sequence = Number(digits);
  if (!Number.isSafeInteger(sequence)) return null;
  return { sequence, naming: hadoop ? "hadoop" : "catalog", gzip };
}

/** Parses a key relative to the table root: only files directly under `metadata/`. */
export function parseMetadataKey(key: string): SequencedMetadataName | null {
  if (!key.startsWith(METADATA_PREFIX)) return null;
  const name = key.slice(METADATA_PREFIX.length);
  if (name.includes("/")) return null;
  return parseMetadataFileName(name);
}

/**
 * Any `metadata/<name>.metadata.json` (or `.gz.metadata.json`, `.metadata.json.gz`) directly under
 * `metadata/`: a version name, or "other" for a name with no sequence. For files named explicitly
 * (a catalog's pointer, `--metadata-location`, the version hint's stem); null for other keys.
 */
export function parseAnyMetadataKey(key: string): MetadataFileName | null {
  const named = parseMetadataKey(key);
  if (named) return named;
  if (!key.startsWith(METADATA_PREFIX)) return null;
  const name = key.slice(METADATA_PREFIX.length);
  if (name.includes("/")) return null;
  const parts = metadataStem(name);
  return parts ? { sequence: null, naming: "other", gzip: parts.gzip } : null;
}

/** The key of the next Hadoop-style metadata file after `current` (`v<N+1>.metadata.json`, same compression). */
export function nextHadoopMetadataKey(current: SequencedMetadataName): string {
  return `${METADATA_PREFIX}v${current.sequence + 1}${current.gzip ? ".gz.metadata.json" : ".metadata.json"}`;
}

/** The key of the next catalog-style metadata file after `current` (`<N+1, 5 digits>-<uuid>.metadata.json`). */
export function nextCatalogMetadataKey(current: SequencedMetadataName, uuid: string): string {
  const number = String(current.sequence + 1).padStart(5, "0");
  return `${METADATA_PREFIX}${number}-${uuid}${current.gzip ? ".gz.metadata.json" : ".metadata.json"}`;
}

/**
 * The number a version hint holds: digits ("5"), or a file stem some writers store ("v5",
 * "00005-uuid"). Null when the text says nothing usable (see versionHintKeys for a stem with no number).
 */
export function parseVersionHint(text: string): number | null {
  const trimmed = text.trim();
  const match = /^v?(\d+)(?:-.*)?$/.exec(trimmed);
  if (!match) return null;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * The metadata files a version hint that holds no number may name, first match wins: a stem some
 * writers store ("final" for `vfinal.metadata.json`, as DuckDB reads `v<hint>` then `<hint>`).
 * Empty when the text is no usable stem.
 */
export function versionHintKeys(text: string): string[] {
  const stem = text.trim();
  if (stem === "" || !/^[A-Za-z0-9._-]+$/.test(stem) || stem.startsWith(".")) return [];
  const keys = [`${METADATA_PREFIX}v${stem}.metadata.json`, `${METADATA_PREFIX}${stem}.metadata.json`];
  if (/\.metadata\.json(\.gz)?$/.test(stem)) keys.unshift(`${METADATA_PREFIX}${stem}`);
  return [...new Set(keys)];
}
