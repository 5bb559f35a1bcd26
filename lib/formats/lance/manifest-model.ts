/**
 * A decoded Lance version in plain TypeScript terms: the Manifest message, its index
 * section and its transaction, with 64-bit values converted once, here. Numbers that can
 * exceed 2^53 (deletion file ids, feature flags, row-id counters) stay bigint; counts and
 * sizes become numbers through the checked conversion.
 */
import type { SchemaField } from "../table-format.ts";
import { CorruptFileError, UnsupportedFeatureError } from "../errors.ts";
import type { DecodedManifestFile } from "./manifest-file.ts";
import { operationName } from "./operation-names.ts";
import type { PbDataFragment, PbIndexMetadata, PbTransaction } from "./proto-messages.ts";
import { toBigInt, toSafeNumber } from "./safe-integer.ts";

export interface LanceDataFile {
  /** As recorded: relative to `data/` of the root, or of the base named by `baseId`. */
  path: string;
  /** 0 = unknown. */
  sizeBytes: number;
  baseId: number | null;
  fileMajorVersion: number;
  fileMinorVersion: number;
}

export type DeletionFileSuffix = "arrow" | "bin";

export interface LanceDeletionFile {
  suffix: DeletionFileSuffix;
  readVersion: bigint;
  id: bigint;
  /** null = unknown (stored as 0 by old writers). */
  numDeletedRows: number | null;
  baseId: number | null;
}

export interface LanceFragment {
  id: number;
  files: LanceDataFile[];
  deletionFile: LanceDeletionFile | null;
  /** Rows in the data files, deleted ones included; null = unknown (legacy). */
  physicalRows: number | null;
}

export interface LanceIndex {
  /** Hyphenated lowercase, as the `_indices/{uuid}/` folder is named. */
  uuid: string;
  name: string;
  fields: number[];
  datasetVersion: number;
  baseId: number | null;
  /** The files in the index's folder, as the manifest records them (newer Lance; empty when it does not). */
  files: { path: string; sizeBytes: number }[];
}

export interface LanceTransaction {
  uuid: string;
  readVersion: number;
  /** Lance's operation name ("Append", "Delete", ...); null for an operation we do not know. */
  operation: string | null;
  properties: Record<string, string>;
}

export interface LanceBasePath {
  id: number;
  name: string | null;
  isDatasetRoot: boolean;
  path: string;
}

export interface LanceManifest {
  version: number;
  /** Commit time in nanoseconds since the epoch (0 when the manifest has none). */
  timestampNanos: bigint;
  fields: SchemaField[];
  fragments: LanceFragment[];
  indices: LanceIndex[];
  /** Relative to `_transactions/`; null when the transaction is only inline. */
  transactionFile: string | null;
  readerFeatureFlags: bigint;
  writerFeatureFlags: bigint;
  config: Record<string, string>;
  tableMetadata: Record<string, string>;
  /** null = main. */
  branch: string | null;
  basePaths: LanceBasePath[];
  maxFragmentId: number | null;
  nextRowId: bigint;
  writerVersion: { library: string; version: string } | null;
  dataFormat: { fileFormat: string; version: string } | null;
}

const DELETION_SUFFIXES: readonly DeletionFileSuffix[] = ["arrow", "bin"];

function optionalId(value: number | undefined): number | null {
  return value === undefined ? null : value;
}

function toFragment(pb: PbDataFragment, uri: string): LanceFragment {
  const id = toSafeNumber(pb.id, "fragment id", uri);
  const what = `fragment ${id}`;
  const physicalRows = toSafeNumber(pb.physical_rows, `${what} physical_rows`, uri);
  let deletionFile: LanceDeletionFile | null = null;
  if (pb.deletion_file) {
    const suffix = DELETION_SUFFIXES[pb.deletion_file.file_type];
    if (suffix === undefined) {
      throw new UnsupportedFeatureError(uri, `${what} has a deletion file of unknown type ${pb.deletion_file.file_type}`);
    }
    const deleted = toSafeNumber(pb.deletion_file.num_deleted_rows, `${what} num_deleted_rows`, uri);
    deletionFile = {
      suffix,
      readVersion: toBigInt(pb.deletion_file.read_version),
      id: toBigInt(pb.deletion_file.id),
      numDeletedRows: deleted === 0 ? null : deleted,
      baseId: optionalId(pb.deletion_file.base_id),
    };
  }
  return {
    id,
    files: pb.files.map((file) => ({
      path: file.path,
      sizeBytes: toSafeNumber(file.file_size_bytes, `${what} file_size_bytes`, uri),
      baseId: optionalId(file.base_id),
      fileMajorVersion: file.file_major_version,
      fileMinorVersion: file.file_minor_version,
    })),
    deletionFile,
    physicalRows: physicalRows === 0 ? null : physicalRows,
  };
}

export function formatUuid(bytes: Uint8Array, uri: string): string {
  if (bytes.length !== 16) {
    throw new CorruptFileError(uri, `index uuid has ${bytes.length} bytes, expected 16`);
  }
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function toIndex(pb: PbIndexMetadata, uri: string): LanceIndex {
  if (!pb.uuid) throw new CorruptFileError(uri, `index ${JSON.stringify(pb.name)} has no uuid`);
  return {
    uuid: formatUuid(pb.uuid.uuid, uri),
    name: pb.name,
    fields: pb.fields,
    datasetVersion: toSafeNumber(pb.dataset_version, `index ${JSON.stringify(pb.name)} dataset_version`, uri),
    baseId: optionalId(pb.base_id),
    files: (pb.files ?? []).map((file) => ({ path: file.path, sizeBytes: toSafeNumber(file.size_bytes, `index ${JSON.stringify(pb.name)} file size`, uri) })),
  };
}

export function toTransaction(pb: PbTransaction, uri: string): LanceTransaction {
  return {
    uuid: pb.uuid,
    readVersion: toSafeNumber(pb.read_version, "transaction read_version", uri),
    operation: operationName(pb.operation),
    properties: { ...pb.transaction_properties },
  };
}

/** Timestamp → nanoseconds, as Lance keeps it (u128 seconds * 1e9 + nanos; missing = 0). */
function timestampNanos(seconds: string, nanos: number): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}

export function toLanceManifest(decoded: DecodedManifestFile, uri: string): LanceManifest {
  const pb = decoded.manifest;
  return {
    version: toSafeNumber(pb.version, "manifest version", uri),
    timestampNanos: pb.timestamp ? timestampNanos(pb.timestamp.seconds, pb.timestamp.nanos) : 0n,
    fields: pb.fields.map((field) => ({
      id: field.id,
      parentId: field.parent_id,
      name: field.name,
      logicalType: field.logical_type,
      nullable: field.nullable,
    })),
    fragments: pb.fragments.map((fragment) => toFragment(fragment, uri)),
    indices: (decoded.indexSection?.indices ?? []).map((index) => toIndex(index, uri)),
    transactionFile: pb.transaction_file === "" ? null : pb.transaction_file,
    readerFeatureFlags: toBigInt(pb.reader_feature_flags),
    writerFeatureFlags: toBigInt(pb.writer_feature_flags),
    config: { ...pb.config },
    tableMetadata: { ...pb.table_metadata },
    branch: pb.branch ?? null,
    basePaths: pb.base_paths.map((base) => ({
      id: base.id,
      name: base.name ?? null,
      isDatasetRoot: base.is_dataset_root,
      path: base.path,
    })),
    maxFragmentId: pb.max_fragment_id ?? null,
    nextRowId: toBigInt(pb.next_row_id),
    writerVersion: pb.writer_version ? { library: pb.writer_version.library, version: pb.writer_version.version } : null,
    dataFormat: pb.data_format ? { fileFormat: pb.data_format.file_format, version: pb.data_format.version } : null,
  };
}
