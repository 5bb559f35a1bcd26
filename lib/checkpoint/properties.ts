/**
 * Transaction properties are stored as one JSON string per version. A writer can put anything
 * in them, so one huge map must not bloat every future checkpoint: above the limit the map is
 * replaced by a wrapper that says it was truncated, how big it was, and keeps a short preview.
 */

/** Above this many UTF-8 bytes of JSON, properties are truncated (DESIGN.md: 10 KB). */
export const MAX_TRANSACTION_PROPERTIES_BYTES = 10 * 1024;
/** Characters of the original JSON kept in the wrapper's preview. */
export const TRUNCATED_PREVIEW_CHARS = 1024;

export const TRUNCATED_MARKER_KEY = "lakewarden.truncated";
export const ORIGINAL_SIZE_KEY = "lakewarden.original_size_bytes";
export const PREVIEW_KEY = "lakewarden.preview";

/** The JSON stored in the `transaction_properties` column for one version. */
export function encodeTransactionProperties(properties: Record<string, string>): string {
  const json = JSON.stringify(sortedCopy(properties));
  const size = Buffer.byteLength(json, "utf8");
  if (size <= MAX_TRANSACTION_PROPERTIES_BYTES) return json;
  return JSON.stringify({
    [TRUNCATED_MARKER_KEY]: "true",
    [ORIGINAL_SIZE_KEY]: String(size),
    [PREVIEW_KEY]: previewOf(json),
  });
}

/** Parses the column value back; throws on anything that is not a JSON object of strings. */
export function decodeTransactionProperties(json: string): Record<string, string> {
  const value: unknown = JSON.parse(json);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError("transaction_properties is not a JSON object");
  }
  const properties: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== "string") throw new TypeError(`transaction property ${JSON.stringify(key)} is not a string`);
    properties[key] = entry;
  }
  return properties;
}

export function isTruncatedProperties(properties: Record<string, string>): boolean {
  return properties[TRUNCATED_MARKER_KEY] === "true";
}

/** Cut by code points so the preview is always valid text. */
function previewOf(json: string): string {
  return Array.from(json).slice(0, TRUNCATED_PREVIEW_CHARS).join("");
}

/** Sorted keys make the stored JSON stable, so equal maps compare equal as strings. */
function sortedCopy(properties: Record<string, string>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(properties).sort()) sorted[key] = properties[key] as string;
  return sorted;
}
