/**
 * The Lance protobuf messages, decoded with protobufjs from the committed descriptor
 * (protos/descriptor.ts, generated from the .proto files). The `Pb*` interfaces describe
 * the plain objects `toObject` returns with the options below: 64-bit integers as decimal
 * strings, enums as numbers, defaults filled in, `optional` fields absent when unset.
 * Unknown fields are skipped by protobufjs, so newer writers' additions stay readable.
 */
import protobuf from "protobufjs";
import { CorruptFileError } from "../errors.ts";
import { lanceProtoDescriptor } from "./protos/descriptor.ts";

// protobufjs decodes uint64 losslessly only when long.js is present (it requires it
// itself, so bundlers include it). Without it, values above 2^53 would be rounded.
if (!protobuf.util.Long) {
  throw new Error("protobufjs was loaded without long.js support: 64-bit fields would lose precision");
}

/** The Lance messages, built once from the descriptor (manifest-reader.ts decodes through it too). */
export const lanceProtoRoot = protobuf.Root.fromJSON(lanceProtoDescriptor as protobuf.INamespace);
const root = lanceProtoRoot;

const TO_OBJECT_OPTIONS: protobuf.IConversionOptions = {
  longs: String,
  enums: Number,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

export type U64 = string;
export type I64 = string;

export interface PbTimestamp {
  seconds: I64;
  nanos: number;
}

export interface PbField {
  type: number;
  name: string;
  id: number;
  parent_id: number;
  logical_type: string;
  nullable: boolean;
  extension_name: string;
  metadata: Record<string, Uint8Array>;
}

export interface PbExternalFile {
  path: string;
  offset: U64;
  size: U64;
}

export interface PbDataFile {
  path: string;
  fields: number[];
  column_indices: number[];
  file_major_version: number;
  file_minor_version: number;
  file_size_bytes: U64;
  base_id?: number;
}

export interface PbDeletionFile {
  file_type: number;
  read_version: U64;
  id: U64;
  num_deleted_rows: U64;
  base_id?: number;
}

export interface PbDataFragment {
  id: U64;
  files: PbDataFile[];
  deletion_file?: PbDeletionFile | null;
  physical_rows: U64;
  external_row_ids?: PbExternalFile;
  external_last_updated_at_versions?: PbExternalFile;
  external_created_at_versions?: PbExternalFile;
}

export interface PbBasePath {
  id: number;
  name?: string;
  is_dataset_root: boolean;
  path: string;
}

export interface PbManifest {
  fields: PbField[];
  fragments: PbDataFragment[];
  version: U64;
  version_aux_data: U64;
  index_section?: U64;
  timestamp?: PbTimestamp | null;
  tag: string;
  reader_feature_flags: U64;
  writer_feature_flags: U64;
  max_fragment_id?: number;
  transaction_file: string;
  writer_version?: { library: string; version: string; prerelease?: string; build_metadata?: string } | null;
  next_row_id: U64;
  data_format?: { file_format: string; version: string } | null;
  config: Record<string, string>;
  base_paths: PbBasePath[];
  table_metadata: Record<string, string>;
  branch?: string;
  transaction_section?: U64;
}

export interface PbIndexMetadata {
  uuid?: { uuid: Uint8Array } | null;
  fields: number[];
  name: string;
  dataset_version: U64;
  index_version?: number;
  created_at?: U64;
  base_id?: number;
  files: { path: string; size_bytes: U64 }[];
}

export interface PbIndexSection {
  indices: PbIndexMetadata[];
}

export interface PbTransaction {
  read_version: U64;
  uuid: string;
  tag: string;
  transaction_properties: Record<string, string>;
  /** Name of the oneof case that is set (proto field name, e.g. "create_index"), if any we know. */
  operation?: string;
}

const manifestType = root.lookupType("lance.table.Manifest");
const indexSectionType = root.lookupType("lance.table.IndexSection");
const transactionType = root.lookupType("lance.table.Transaction");

function decodeWith<T>(type: protobuf.Type, bytes: Uint8Array, uri: string): T {
  try {
    return type.toObject(type.decode(bytes), TO_OBJECT_OPTIONS) as T;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CorruptFileError(uri, `cannot decode the ${type.name} protobuf: ${reason}`, { cause: error });
  }
}

export function decodeManifest(bytes: Uint8Array, uri: string): PbManifest {
  return decodeWith<PbManifest>(manifestType, bytes, uri);
}

export function decodeIndexSection(bytes: Uint8Array, uri: string): PbIndexSection {
  return decodeWith<PbIndexSection>(indexSectionType, bytes, uri);
}

export function decodeTransaction(bytes: Uint8Array, uri: string): PbTransaction {
  return decodeWith<PbTransaction>(transactionType, bytes, uri);
}

/** Encodes a Manifest from plain data; for tests that build or patch manifests. */
export function encodeManifest(manifest: Record<string, unknown>): Uint8Array {
  return manifestType.encode(manifestType.fromObject(manifest)).finish();
}

/** Encodes a Transaction from plain data; for tests. */
export function encodeTransaction(transaction: Record<string, unknown>): Uint8Array {
  return transactionType.encode(transactionType.fromObject(transaction)).finish();
}
