/**
 * UniForm (Delta's "universal format"): a Delta table whose `delta.universalFormat.enabledFormats`
 * names `iceberg` also writes Iceberg metadata for its own data, under `metadata/` at the table
 * root. That folder is the table's own, not an orphan: Delta's VACUUM hides a `metadata` path
 * component while UniForm Iceberg is on (Spark DeltaTableUtils.isHiddenDirectory), and a location
 * holding both a Delta log and that metadata is one Delta table, not two formats at once.
 */
import { TableFormatError } from "../errors.ts";
import type { ObjectStore } from "../../store/object-store.ts";
import { loadSnapshot } from "./snapshot.ts";

export const UNIVERSAL_FORMATS = "delta.universalFormat.enabledFormats";
/** The path component Delta's VACUUM hides while UniForm Iceberg is on. */
export const ICEBERG_METADATA_COMPONENT = "metadata";

/** The formats UniForm writes for this table (lower case), from its configuration. */
export function universalFormats(config: Readonly<Record<string, string>>): string[] {
  const raw = config[UNIVERSAL_FORMATS];
  if (raw === undefined || raw === null) return [];
  return String(raw)
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
}

export function uniformIcebergEnabled(config: Readonly<Record<string, string>>): boolean {
  return universalFormats(config).includes("iceberg");
}

/**
 * The other formats whose files the Delta table at `store` writes itself (UniForm), read from its
 * latest state; none when the log cannot be read (then nothing is explained).
 */
export async function formatsWrittenAlongside(store: ObjectStore): Promise<string[]> {
  try {
    return universalFormats((await loadSnapshot(store)).metadata.configuration ?? {});
  } catch (error) {
    if (error instanceof TableFormatError) return [];
    throw error;
  }
}
