/**
 * Each path stored once in a sectioned head: the referenced files of a version are mostly
 * the live files' data and deletion paths, so the `referenced_files` section names those by
 * reference and spells out only the others (indices, transaction files, ...).
 *
 *   referenced_files: path (utf8, null when referenced) | live_ref (int64, null when spelled
 *   out) | kind | size
 *
 * live_ref >= 0: index into the live files' paths, flattened in row order;
 * live_ref < 0: the deletion file of live-file row -(live_ref + 1).
 */
import { HeadCodecError } from "./errors.ts";
import type { HeadColumn, HeadTable } from "./model.ts";

export const LIVE_REF_COLUMN = "live_ref";

function column(table: HeadTable, name: string): HeadColumn | undefined {
  return table.columns.find((c) => c.name === name);
}

/** `referenced` with paths found in `live` replaced by references; null when the tables lack the expected columns. */
export function packReferencedFiles(live: HeadTable, referenced: HeadTable): HeadTable | null {
  const livePaths = column(live, "paths");
  const liveDeletions = column(live, "deletion_file");
  const paths = column(referenced, "path");
  if (livePaths?.type !== "utf8_list" || liveDeletions?.type !== "utf8" || paths?.type !== "utf8" || column(referenced, LIVE_REF_COLUMN)) return null;
  // Formats list a version's references in the order of its live files (Lance: each
  // fragment's data files, then its deletion file), so most rows match the next live path or
  // deletion file in line; the map of every path is built only if one does not.
  const flat: string[] = [];
  const rowOfFlat: number[] = [];
  livePaths.values.forEach((row, r) => {
    for (const path of row ?? []) {
      flat.push(path);
      rowOfFlat.push(r);
    }
  });
  let index: Map<string, number> | null = null;
  const lookup = (path: string): number | undefined => {
    if (!index) {
      index = new Map();
      flat.forEach((p, i) => {
        if (!index!.has(p)) index!.set(p, i);
      });
      liveDeletions.values.forEach((p, row) => {
        if (p !== null && !index!.has(p)) index!.set(p, -(row + 1));
      });
    }
    return index.get(path);
  };
  const spelled: (string | null)[] = new Array(paths.values.length);
  const refs: (number | null)[] = new Array(paths.values.length);
  let next = 0;
  let lastRow = -1;
  paths.values.forEach((path, i) => {
    let ref: number | undefined;
    if (path !== null) {
      if (next < flat.length && flat[next] === path) {
        ref = next++;
        lastRow = rowOfFlat[ref]!;
      } else if (lastRow >= 0 && liveDeletions.values[lastRow] === path) {
        ref = -(lastRow + 1);
      } else if (next < flat.length) {
        // Out of line before every live path was matched: look it up.
        ref = lookup(path);
      }
      // Past the live paths (indices, transaction files): spelled out without building the map.
    }
    spelled[i] = ref === undefined ? path : null;
    refs[i] = ref === undefined ? null : ref;
  });
  return {
    name: referenced.name,
    columns: [{ name: "path", type: "utf8", values: spelled }, { name: LIVE_REF_COLUMN, type: "int64", values: refs }, ...referenced.columns.filter((c) => c.name !== "path")],
  };
}

/** Reverses packReferencedFiles; `packed` without a live_ref column is returned as is. */
export function unpackReferencedFiles(live: HeadTable | undefined, packed: HeadTable): HeadTable {
  const refs = column(packed, LIVE_REF_COLUMN);
  if (!refs) return packed;
  const paths = column(packed, "path");
  const livePaths = live && column(live, "paths");
  const liveDeletions = live && column(live, "deletion_file");
  if (refs.type !== "int64" || paths?.type !== "utf8" || livePaths?.type !== "utf8_list" || liveDeletions?.type !== "utf8") {
    throw new HeadCodecError("referenced_files refers to live files the head does not hold");
  }
  const flat: string[] = [];
  for (const row of livePaths.values) for (const path of row ?? []) flat.push(path);
  const values = paths.values.map((path, i) => {
    const ref = refs.values[i];
    if (ref === null || ref === undefined) return path;
    const resolved = ref >= 0 ? flat[ref] : liveDeletions.values[-ref - 1];
    if (resolved === undefined || resolved === null) throw new HeadCodecError(`referenced_files row ${i} refers to live file ${ref}, which does not exist`);
    return resolved;
  });
  return {
    name: packed.name,
    columns: [{ name: "path", type: "utf8", values }, ...packed.columns.filter((c) => c.name !== "path" && c.name !== LIVE_REF_COLUMN)],
  };
}
