/**
 * VACUUM's rules written out for tests, sharing no code with lib/formats/delta/ but the DV path
 * decoding: what a VACUUM with every tombstone expired deletes from a table folder, given the
 * live files an independent reader (DuckDB) found.
 */
import { deletionVectorLocation } from "../../../lib/formats/delta/deletion-vectors.ts";
import type { OracleLiveFile } from "./duckdb-oracle.ts";
import { listKeys } from "./log-surgery.ts";

/** A hidden path component (names starting `_` or `.`), except the two Delta keeps visible. */
export const hiddenComponent = (c: string): boolean => (c.startsWith("_") || c.startsWith(".")) && !c.startsWith("_change_data") && !c.startsWith("_delta_index");

/** DV file keys of `u` descriptors in DuckDB's live-file ids ("u" + z85 [+ "@offset"]). */
export function dvKeysOf(dvIds: readonly string[]): string[] {
  return dvIds
    .filter((id) => id.startsWith("u"))
    .map((id) => deletionVectorLocation({ storageType: "u", pathOrInlineDv: id.slice(1).replace(/@\d+$/, ""), sizeInBytes: 0, cardinality: 0 }))
    .flatMap((l) => (l.kind === "relative" ? [l.path] : []));
}

/** Every key a VACUUM deletes when all files are old and every tombstone expired: not in the log, not hidden, not live, not a live file's DV. */
export async function vacuumAllExpired(dir: string, live: readonly OracleLiveFile[], alsoKeep: Iterable<string> = []): Promise<string[]> {
  const keep = new Set([...live.map((f) => f.path), ...dvKeysOf(live.map((f) => f.dvId)), ...alsoKeep]);
  return (await listKeys(dir)).filter((k) => !k.startsWith("_delta_log/") && !k.split("/").some(hiddenComponent) && !keep.has(k)).sort();
}
