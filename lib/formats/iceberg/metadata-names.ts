/**
 * Names of Iceberg table metadata files under `metadata/` (iceberg.md §1):
 *   - file-system ("Hadoop") tables: `v<N>.metadata.json`, and `metadata/version-hint.text`
 *     holding N (BigQuery writes `v<epoch>`);
 *   - catalog tables: `<NNNNN>-<uuid>.metadata.json` (the number before the first "-");
 *   - gzip: `<name>.gz.metadata.json` (Java, pyiceberg) and the legacy `<name>.metadata.json.gz`.
 * Anything else ending in `.metadata.json` (`<uuid>.metadata.json`, the temp file of a Hadoop
 * commit that never got renamed) is not a version of the table: orphan removal judges it.
 */
export const METADATA_PREFIX = "metadata/";
export const DATA_PREFIX = "data/";
export const VERSION_HINT_KEY = "metadata/version-hint.text";

export type MetadataNaming = "hadoop" | "catalog";

export interface MetadataFileName {
  /** The metadata file's sequence: N of `vN`, or NNNNN of `NNNNN-uuid`. */
  sequence: number;
  naming: MetadataNaming;
  gzip: boolean;
}

const HADOOP = /^v(\d+)$/;
/**
 * The number, "-", then a whole UUID. Not looser: a failed Hadoop commit leaves
 * `<uuid>.metadata.json`, and a UUID whose first group is all digits (`12345678-...`) must not
 * read as metadata file number 12345678.
 */
const CATALOG = /^(\d+)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Parses a file name (no folder); null when it is not a table metadata file name. */
export function parseMetadataFileName(name: string): MetadataFileName | null {
  let stem: string;
  let gzip = false;
  if (name.endsWith(".gz.metadata.json")) {
    stem = name.slice(0, -".gz.metadata.json".length);
    gzip = true;
  } else if (name.endsWith(".metadata.json.gz")) {
    stem = name.slice(0, -".metadata.json.gz".length);
    gzip = true;
  } else if (name.endsWith(".metadata.json")) {
    stem = name.slice(0, -".metadata.json".length);
  } else {
    return null;
  }
  const hadoop = HADOOP.exec(stem);
  const catalog = hadoop ? null : CATALOG.exec(stem);
  const digits = hadoop?.[1] ?? catalog?.[1];
  if (digits === undefined) return null;
  const sequence = Number(digits);
  if (!Number.isSafeInteger(sequence)) return null;
  return { sequence, naming: hadoop ? "hadoop" : "catalog", gzip };
}

/** Parses a key relative to the table root: only files directly under `metadata/`. */
export function parseMetadataKey(key: string): MetadataFileName | null {
  if (!key.startsWith(METADATA_PREFIX)) return null;
  const name = key.slice(METADATA_PREFIX.length);
  if (name.includes("/")) return null;
  return parseMetadataFileName(name);
}

/** The key of the next Hadoop-style metadata file after `current` (`v<N+1>.metadata.json`, same compression). */
export function nextHadoopMetadataKey(current: MetadataFileName): string {
  return `${METADATA_PREFIX}v${current.sequence + 1}${current.gzip ? ".gz.metadata.json" : ".metadata.json"}`;
}

/** The key of the next catalog-style metadata file after `current` (`<N+1, 5 digits>-<uuid>.metadata.json`). */
export function nextCatalogMetadataKey(current: MetadataFileName, uuid: string): string {
  const number = String(current.sequence + 1).padStart(5, "0");
  return `${METADATA_PREFIX}${number}-${uuid}${current.gzip ? ".gz.metadata.json" : ".metadata.json"}`;
}

/**
 * The number a version hint holds: digits ("5"), or a file stem some writers store ("v5",
 * "00005-uuid"). Null when the text says nothing usable.
 */
export function parseVersionHint(text: string): number | null {
  const trimmed = text.trim();
  const match = /^v?(\d+)(?:-.*)?$/.exec(trimmed);
  if (!match) return null;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : null;
}
