/**
 * A Delta snapshot in the model's neutral terms, for the head and for cleanup:
 *   - live files (one per live add: the data file key, size, rows from stats, its DV file and
 *     cardinality), with paths resolved by the path validator;
 *   - the schema (from metaData.schemaString, nested fields flattened with parent ids);
 *   - the seven totals (from the replayed state; rows null when a file has no stats);
 *   - sections: the rebuilt state as it is (protocol, metadata, domain metadata, txns, live adds
 *     with partition values, size, stats and DV), so a reader plans from one GET.
 * Shapes match lib/formats/table-format.ts (LiveFile, SchemaField, FormatSection) structurally.
 */
import type { AddAction } from "./actions.ts";
import { deletionVectorLocation } from "./deletion-vectors.ts";
import type { ResolvedDeltaPath } from "./paths.ts";
import type { DeltaSnapshot } from "./snapshot.ts";

export interface DeltaLiveFile {
  fragmentId: number;
  paths: string[];
  size: number;
  physicalRows: number;
  deletionFile: string | null;
  deletedRows: number;
}

export interface DeltaSchemaField {
  id: number;
  parentId: number;
  name: string;
  logicalType: string;
  nullable: boolean;
}

export type SectionValue = string | number | boolean | null;

export interface DeltaSection {
  name: string;
  columns: Record<string, SectionValue[]>;
}

export interface DeltaTotals {
  total_fragments: number;
  total_data_files: number;
  total_files_size: number;
  total_deletion_files: number;
  total_data_file_rows: number | null;
  total_deletion_file_rows: number;
  total_rows: number | null;
}

export interface UnresolvedPath {
  path: string;
  kind: "outside" | "unresolvable";
  reason: string;
}

/**
 * numRecords from an add's JSON stats or, when a checkpoint carries only the struct form
 * (`delta.checkpoint.writeStatsAsStruct` without `writeStatsAsJson`), from `stats_parsed`; null
 * when neither says.
 */
export function recordCount(add: AddAction): number | null {
  let count = recordCounts.get(add);
  if (count === undefined) {
    count = statsRecordCount(add);
    recordCounts.set(add, count);
  }
  return count;
}

/**
 * Counts by action object: parsed actions are shared by every snapshot that holds them (the
 * log's parse cache), and each version's totals would otherwise parse every live file's stats again.
 */
const recordCounts = new WeakMap<AddAction, number | null>();

function statsRecordCount(add: AddAction): number | null {
  if (typeof add.stats === "string") {
    try {
      const n = (JSON.parse(add.stats) as { numRecords?: unknown }).numRecords;
      if (typeof n === "number" && Number.isFinite(n)) return n;
    } catch {
      // Unreadable JSON stats: the struct form may still say.
    }
  }
  const n = add.stats_parsed?.numRecords;
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

/** The key of an add's DV file (null for none or inline), or an unresolved path. */
export function deletionVectorKey(
  add: { deletionVector?: AddAction["deletionVector"] },
  resolve: (path: string) => ResolvedDeltaPath,
): { key: string | null; unresolved?: UnresolvedPath } {
  if (!add.deletionVector) return { key: null };
  const location = deletionVectorLocation(add.deletionVector);
  if (location.kind === "inline") return { key: null };
  if (location.kind === "invalid") return { key: null, unresolved: { path: add.deletionVector.pathOrInlineDv, kind: "unresolvable", reason: location.reason } };
  const path = location.kind === "relative" ? encodeURI(location.path) : location.uri;
  const resolved = resolve(path);
  if (resolved.kind === "key") return { key: resolved.key };
  return { key: null, unresolved: { path, kind: resolved.kind, reason: resolved.reason } };
}

export function deltaLiveFiles(snapshot: DeltaSnapshot, resolve: (path: string) => ResolvedDeltaPath): { liveFiles: DeltaLiveFile[]; unresolved: UnresolvedPath[] } {
  const liveFiles: DeltaLiveFile[] = [];
  const unresolved: UnresolvedPath[] = [];
  snapshot.adds.forEach((add, index) => {
    const resolved = resolve(add.path);
    if (resolved.kind !== "key") {
      unresolved.push({ path: add.path, kind: resolved.kind, reason: resolved.reason });
      return;
    }
    const dv = deletionVectorKey(add, resolve);
    if (dv.unresolved) unresolved.push(dv.unresolved);
    liveFiles.push({
      fragmentId: index,
      paths: [resolved.key],
      size: add.size,
      physicalRows: recordCount(add) ?? 0,
      deletionFile: dv.key,
      deletedRows: add.deletionVector?.cardinality ?? 0,
    });
  });
  return { liveFiles, unresolved };
}

export function deltaTotals(snapshot: Pick<DeltaSnapshot, "adds">): DeltaTotals {
  let size = 0;
  let rows: number | null = 0;
  let deletionFiles = 0;
  let deletedRows = 0;
  for (const add of snapshot.adds) {
    size += add.size;
    const n = recordCount(add);
    rows = rows === null || n === null ? null : rows + n;
    if (add.deletionVector) {
      deletionFiles++;
      deletedRows += add.deletionVector.cardinality ?? 0;
    }
  }
  return {
    total_fragments: snapshot.adds.length,
    total_data_files: snapshot.adds.length,
    total_files_size: size,
    total_deletion_files: deletionFiles,
    total_data_file_rows: rows,
    total_deletion_file_rows: deletedRows,
    total_rows: rows === null ? null : rows - deletedRows,
  };
}

interface DeltaTypeField {
  name: string;
  type: unknown;
  nullable?: boolean;
  metadata?: Record<string, unknown>;
}

/** Flattens metaData.schemaString; ids are the column-mapping ids where present, else positions. */
export function deltaSchemaFields(schemaString: string | null): DeltaSchemaField[] {
  if (!schemaString) return [];
  let schema: { fields?: DeltaTypeField[] };
  try {
    schema = JSON.parse(schemaString) as { fields?: DeltaTypeField[] };
  } catch {
    return [];
  }
  const out: DeltaSchemaField[] = [];
  let next = 0;
  const walk = (fields: DeltaTypeField[], parentId: number) => {
    for (const field of fields) {
      const mapped = field.metadata?.["delta.columnMapping.id"];
      const id = typeof mapped === "number" ? mapped : next;
      next++;
      const type = field.type;
      const logicalType = typeof type === "string" ? type : ((type as { type?: string }).type ?? "unknown");
      out.push({ id, parentId, name: field.name, logicalType, nullable: field.nullable !== false });
      if (type && typeof type === "object" && (type as { type?: string }).type === "struct") walk((type as { fields?: DeltaTypeField[] }).fields ?? [], id);
    }
  };
  walk(schema.fields ?? [], -1);
  return out;
}

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

/** The rebuilt state as named tables. */
export function deltaSections(snapshot: DeltaSnapshot, resolve: (path: string) => ResolvedDeltaPath): DeltaSection[] {
  const p = snapshot.protocol;
  const m = snapshot.metadata;
  const adds = snapshot.adds;
  const column = <T extends SectionValue>(f: (a: AddAction) => T) => adds.map(f);
  return [
    {
      name: "delta_protocol",
      columns: {
        min_reader_version: [p.minReaderVersion],
        min_writer_version: [p.minWriterVersion],
        reader_features: [json(p.readerFeatures)],
        writer_features: [json(p.writerFeatures)],
      },
    },
    {
      name: "delta_metadata",
      columns: {
        id: [m.id ?? null],
        name: [m.name ?? null],
        description: [m.description ?? null],
        format_provider: [m.format?.provider ?? null],
        schema_string: [m.schemaString],
        partition_columns: [json(m.partitionColumns)],
        configuration: [json(m.configuration)],
        created_time: [m.createdTime ?? null],
      },
    },
    {
      name: "delta_domain_metadata",
      columns: { domain: snapshot.domains.map((d) => d.domain), configuration: snapshot.domains.map((d) => d.configuration) },
    },
    {
      name: "delta_txns",
      columns: { app_id: snapshot.txns.map((t) => t.appId), version: snapshot.txns.map((t) => t.version), last_updated: snapshot.txns.map((t) => t.lastUpdated ?? null) },
    },
    {
      name: "delta_adds",
      columns: {
        path: column((a) => a.path),
        key: column((a) => {
          const r = resolve(a.path);
          return r.kind === "key" ? r.key : null;
        }),
        partition_values: column((a) => json(a.partitionValues)),
        size: column((a) => a.size),
        modification_time: column((a) => a.modificationTime ?? null),
        stats: column((a) => (typeof a.stats === "string" ? a.stats : null)),
        // The struct form, only where the JSON form is absent (a checkpoint written with structs only).
        stats_parsed: column((a) => (typeof a.stats !== "string" && a.stats_parsed ? json(a.stats_parsed) : null)),
        tags: column((a) => json(a.tags)),
        dv_storage_type: column((a) => a.deletionVector?.storageType ?? null),
        dv_path_or_inline: column((a) => a.deletionVector?.pathOrInlineDv ?? null),
        dv_offset: column((a) => a.deletionVector?.offset ?? null),
        dv_size_in_bytes: column((a) => a.deletionVector?.sizeInBytes ?? null),
        dv_cardinality: column((a) => a.deletionVector?.cardinality ?? null),
        dv_key: column((a) => deletionVectorKey(a, resolve).key),
        base_row_id: column((a) => a.baseRowId ?? null),
        default_row_commit_version: column((a) => a.defaultRowCommitVersion ?? null),
      },
    },
    {
      name: "delta_log_segment",
      columns: {
        checkpoint_version: [snapshot.checkpoint?.version ?? null],
        checkpoint_files: [json(snapshot.checkpoint ? [...snapshot.checkpoint.files, ...snapshot.checkpoint.sidecars] : [])],
        commits_since_checkpoint: [json(snapshot.replayedCommits)],
      },
    },
  ];
}
