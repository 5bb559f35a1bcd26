/**
 * Reading a snapshot for its head, taking again the rows the previous head holds for manifests it
 * was built from. A manifest never changes once written, and a manifest-list entry names it by
 * path with its length, the snapshot that added it and the sequence number its entries inherit:
 * when all of those match a manifest of the previous head (and the table's location, which
 * decides how its paths resolve), that head's iceberg_files rows for it are what reading it would
 * give. Only new manifests are read: a commit that adds one manifest reads one.
 *
 * This is for the head's content alone. Cleanup never comes here: readForCleanup, the proof of
 * what is kept and every expiry read every manifest from storage (snapshot-files.ts). A previous
 * head whose sections are missing, do not decode or do not agree with each other (row counts,
 * column lengths, a path that is not text) gives nothing to reuse, and every manifest is read.
 */
import type { FileReference } from "../../model/file-reference.ts";
import type { FormatSection, TableSnapshot, UnresolvedReference } from "../table-format.ts";
import { FILE_COLUMNS, FILES_SECTION, INTEGER_COLUMNS, MANIFESTS_SECTION, manifestRows, type Cell, type ManifestRows } from "./live-files.ts";
import type { ManifestFile } from "./manifests.ts";
import { listedManifests, readableKey, type IcebergFileReader } from "./snapshot-files.ts";
import type { IcebergSnapshot, IcebergTableMetadata } from "./table-metadata.ts";
import type { IcebergPathResolver } from "./table-paths.ts";

/** What a manifest-list entry says of a manifest that names its content: what a reuse must match. */
type ManifestIdentity = Pick<ManifestFile, "length" | "addedSnapshotId" | "sequenceNumber" | "content" | "partitionSpecId">;

/** A previous head's rows, by manifest key. */
export type ReusableManifests = Map<string, { file: ManifestIdentity; rows: ManifestRows }>;

export interface SnapshotRows {
  chunks: ManifestRows[];
  references: FileReference[];
  unresolved: UnresolvedReference[];
  /** How many manifests were read from storage (the rest came from the previous head). */
  manifestsRead: number;
}

/** The snapshot's manifests as rows, each taken from `reusable` when it matches, else read. `metadataUri` names the metadata file in errors. */
export async function readSnapshotRows(
  reader: IcebergFileReader,
  metadata: IcebergTableMetadata,
  snapshot: IcebergSnapshot,
  resolve: IcebergPathResolver,
  metadataUri: string,
  reusable: ReusableManifests | null,
): Promise<SnapshotRows> {
  const what = `snapshot ${snapshot.id}`;
  const { listed, manifestListKey } = await listedManifests(reader, snapshot, resolve, metadataUri);
  let manifestsRead = 0;
  const chunks = await Promise.all(
    listed.map(async (file) => {
      const key = readableKey(resolve, file.path, metadataUri, `${what}: manifest`);
      const prior = reusable?.get(key);
      if (prior && sameManifest(prior.file, file)) return { ...prior.rows, file };
      manifestsRead++;
      const entries = await reader.manifest(key, file, `manifest ${file.path} of ${what}`);
      return manifestRows({ file, key, entries }, resolve, what);
    }),
  );

  const references: FileReference[] = manifestListKey === null ? [] : [{ path: manifestListKey, role: "manifest-list" }];
  const unresolved: UnresolvedReference[] = [];
  const seen = new Set<string>();
  for (const chunk of chunks) {
    references.push({ path: chunk.key, role: "manifest", ...(chunk.file.length !== null ? { size: chunk.file.length } : {}) });
    const paths = chunk.columns.path as string[];
    chunk.resolved.forEach((isKey, i) => {
      if (!isKey) return;
      const path = paths[i]!;
      if (!seen.has(path)) references.push({ path, role: chunk.columns.content![i] === 0 ? "data" : "delete", size: Number(chunk.columns.file_size_in_bytes![i]) });
      seen.add(path);
    });
    unresolved.push(...chunk.unresolved);
  }
  for (const stats of metadata.statistics) {
    if (stats.snapshotId !== snapshot.id) continue;
    const resolved = resolve(stats.path);
    if (resolved.kind === "key") references.push({ path: resolved.key, role: "statistics", ...(stats.size !== null ? { size: stats.size } : {}) });
    else unresolved.push({ path: stats.path, kind: resolved.kind, reason: `${what} ${stats.kind}: ${resolved.reason}` });
  }
  return { chunks, references, unresolved, manifestsRead };
}

function sameManifest(prior: ManifestIdentity, listed: ManifestFile): boolean {
  return (
    listed.length !== null &&
    listed.addedSnapshotId !== null &&
    prior.length === listed.length &&
    prior.addedSnapshotId === listed.addedSnapshotId &&
    prior.sequenceNumber === listed.sequenceNumber &&
    prior.content === listed.content &&
    prior.partitionSpecId === listed.partitionSpecId
  );
}

/**
 * The rows a previous head (its snapshot's sections) holds per manifest, for a table at
 * `location`; null when it holds none to trust (no iceberg_manifests section, written before it
 * existed; sections that disagree; another location). Only manifests every row of which resolved
 * to a key are offered.
 */
export function reusableManifests(previous: TableSnapshot | undefined, location: string): ReusableManifests | null {
  if (!previous) return null;
  let sections: FormatSection[];
  try {
    sections = previous.sections ?? [];
  } catch {
    // A lazily decoded section that does not decode: read every manifest.
    return null;
  }
  const files = sections.find((s) => s.name === FILES_SECTION)?.columns;
  const manifests = sections.find((s) => s.name === MANIFESTS_SECTION)?.columns;
  if (!files || !manifests) return null;
  const total = files.path?.length ?? -1;
  if (FILE_COLUMNS.some((name) => files[name]?.length !== total)) return null;
  const count = manifests.key?.length ?? -1;
  const names = ["key", "length", "added_snapshot_id", "sequence_number", "content", "partition_spec_id", "location", "resolved", "rows"];
  if (names.some((name) => manifests[name]?.length !== count)) return null;

  const out: ReusableManifests = new Map();
  let at = 0;
  for (let m = 0; m < count; m++) {
    const rows = manifests.rows![m];
    if (typeof rows !== "number" || !Number.isSafeInteger(rows) || rows < 0 || at + rows > total) return null;
    const start = at;
    at += rows;
    const key = manifests.key![m];
    const parsed = manifestOf(manifests, m);
    if (typeof key !== "string" || parsed === null || manifests.location![m] !== location || manifests.resolved![m] !== true) continue;
    const columns: Record<string, Cell[]> = {};
    for (const name of FILE_COLUMNS) columns[name] = files[name]!.slice(start, at).map((cell) => (INTEGER_COLUMNS.has(name) ? integerCell(cell) : cell));
    if ((columns.path as Cell[]).some((p) => typeof p !== "string") || (columns.content as Cell[]).some((c) => typeof c !== "number")) return null;
    out.set(key, {
      file: parsed,
      rows: {
        file: { ...parsed, path: key, minSequenceNumber: 0n, addedFilesCount: null, existingFilesCount: null, deletedFilesCount: null },
        key,
        columns,
        resolved: columns.path!.map(() => true),
        unresolved: [],
      },
    });
  }
  return at === total ? out : null;
}

function manifestOf(columns: FormatSection["columns"], m: number): ManifestIdentity | null {
  const length = integerCell(columns.length![m]!);
  const added = columns.added_snapshot_id![m];
  const sequence = columns.sequence_number![m];
  const content = integerCell(columns.content![m]!);
  const spec = integerCell(columns.partition_spec_id![m]!);
  if (
    typeof length !== "number" ||
    typeof added !== "string" ||
    typeof sequence !== "string" ||
    !/^-?\d+$/.test(sequence) ||
    typeof content !== "number" ||
    typeof spec !== "number"
  ) {
    return null;
  }
  return { length, addedSnapshotId: added, sequenceNumber: BigInt(sequence), content, partitionSpecId: spec };
}

/**
 * A cell as num() made it: a head stores a column with a value past 2^53 (written as text) as
 * text throughout, so its small numbers come back as text too; they are numbers again here, as
 * reading the manifest would give them.
 */
function integerCell(cell: Cell): Cell {
  if (typeof cell !== "string" || !/^-?\d+$/.test(cell)) return cell;
  const value = Number(cell);
  return Number.isSafeInteger(value) && String(value) === cell ? value : cell;
}
