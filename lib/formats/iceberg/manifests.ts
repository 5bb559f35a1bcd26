/**
 * Manifest lists and manifests (spec "Manifest Lists", "Manifests"), decoded from their Avro
 * records by field id, not by name: writers name fields differently (Java before 1.5 wrote
 * `added_data_files_count`, later `added_files_count`; both are field 504).
 */
import { CorruptFileError } from "../errors.ts";
import type { AvroRecord } from "./avro.ts";

/** One entry of a manifest list (or a v1 snapshot's inline manifest path). */
export interface ManifestFile {
  path: string;
  length: number | null;
  partitionSpecId: number;
  /** 0 = data, 1 = deletes. */
  content: number;
  sequenceNumber: bigint;
  minSequenceNumber: bigint;
  addedSnapshotId: string | null;
  addedFilesCount: number | null;
  existingFilesCount: number | null;
  deletedFilesCount: number | null;
}

export type ContentFileKind = "data" | "position-deletes" | "equality-deletes";

export interface PartitionValue {
  fieldId: number;
  name: string;
  value: unknown;
}

export interface ContentFile {
  /** 0 DATA, 1 POSITION_DELETES, 2 EQUALITY_DELETES. */
  content: number;
  kind: ContentFileKind;
  path: string;
  fileFormat: string;
  partition: PartitionValue[];
  recordCount: bigint;
  fileSizeInBytes: bigint;
  columnSizes: Map<number, bigint>;
  valueCounts: Map<number, bigint>;
  nullValueCounts: Map<number, bigint>;
  nanValueCounts: Map<number, bigint>;
  lowerBounds: Map<number, Uint8Array>;
  upperBounds: Map<number, Uint8Array>;
  equalityIds: number[] | null;
  sortOrderId: number | null;
  /** v3 / deletion vectors: the data file a delete file applies to. */
  referencedDataFile: string | null;
  /** v3 deletion vectors: the blob's place in the Puffin file. */
  contentOffset: bigint | null;
  contentSizeInBytes: bigint | null;
  firstRowId: bigint | null;
}

export const ENTRY_STATUS = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const;

export interface ManifestEntry {
  status: number;
  snapshotId: string | null;
  /** Data sequence number, inherited from the manifest list entry where the writer left it null. */
  sequenceNumber: bigint;
  fileSequenceNumber: bigint;
  file: ContentFile;
}

interface FieldInfo {
  name: string;
  type: unknown;
}

/** Field id → field of a record schema (as JSON). */
function fieldsById(schema: unknown): Map<number, FieldInfo> {
  const out = new Map<number, FieldInfo>();
  const record = unwrapNullable(schema) as { type?: unknown; fields?: unknown };
  if (!record || record.type !== "record" || !Array.isArray(record.fields)) return out;
  for (const field of record.fields as { name: string; type: unknown; "field-id"?: unknown }[]) {
    const id = field["field-id"];
    if (typeof id === "number") out.set(id, { name: field.name, type: field.type });
  }
  return out;
}

function unwrapNullable(type: unknown): unknown {
  if (Array.isArray(type)) return type.find((t) => t !== "null") ?? null;
  return type;
}

function bigintOf(value: unknown): bigint | null {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  return null;
}

function numberOf(value: unknown): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  return null;
}

class FieldReader {
  readonly fields: Map<number, FieldInfo>;
  constructor(schema: unknown) {
    this.fields = fieldsById(schema);
  }
  get(record: AvroRecord, id: number): unknown {
    const field = this.fields.get(id);
    return field === undefined ? undefined : record[field.name];
  }
  has(id: number): boolean {
    return this.fields.has(id);
  }
}

function intMap<V>(value: unknown, convert: (v: unknown) => V | null): Map<number, V> {
  const out = new Map<number, V>();
  if (!Array.isArray(value)) return out;
  for (const pair of value as { key?: unknown; value?: unknown }[]) {
    const key = numberOf(pair?.key);
    const v = convert(pair?.value);
    if (key !== null && v !== null) out.set(key, v);
  }
  return out;
}

const asBytes = (v: unknown): Uint8Array | null => (v instanceof Uint8Array ? new Uint8Array(v) : null);

/** Decodes a manifest list file. */
export async function decodeManifestList(bytes: Uint8Array, uri: string): Promise<ManifestFile[]> {
  const container = await (await avroModule()).decodeAvroContainer(bytes, uri);
  const f = new FieldReader(container.schema);
  if (!f.has(500)) throw new CorruptFileError(uri, "not a manifest list: no manifest_path field (field id 500)");
  return container.records.map((r, index) => {
    const path = f.get(r, 500);
    if (typeof path !== "string" || path === "") throw new CorruptFileError(uri, `manifest list entry #${index} has no manifest_path`);
    return {
      path,
      length: numberOf(f.get(r, 501)),
      partitionSpecId: numberOf(f.get(r, 502)) ?? 0,
      content: numberOf(f.get(r, 517)) ?? 0,
      sequenceNumber: bigintOf(f.get(r, 515)) ?? 0n,
      minSequenceNumber: bigintOf(f.get(r, 516)) ?? 0n,
      addedSnapshotId: bigintOf(f.get(r, 503))?.toString() ?? null,
      addedFilesCount: numberOf(f.get(r, 504)),
      existingFilesCount: numberOf(f.get(r, 505)),
      deletedFilesCount: numberOf(f.get(r, 506)),
    };
  });
}

const KINDS: Record<number, ContentFileKind> = { 0: "data", 1: "position-deletes", 2: "equality-deletes" };

/** A live entry (ADDED or EXISTING) as cleanup needs it: the file's path as written, what it holds, its size and rows. */
export interface LiveContentFile {
  path: string;
  /** 0 DATA, 1 POSITION_DELETES, 2 EQUALITY_DELETES. */
  content: number;
  fileSizeInBytes: bigint;
  recordCount: bigint;
}

/**
 * Decodes a manifest. `listed` is the manifest's entry in the manifest list: ADDED entries with
 * null sequence numbers inherit its sequence number (spec "Sequence Number Inheritance"); a v1
 * manifest (no sequence numbers, or null ones, in any status) gives 0.
 */
export async function decodeManifest(bytes: Uint8Array, uri: string, listed: Pick<ManifestFile, "sequenceNumber">): Promise<ManifestEntry[]> {
  const entries: ManifestEntry[] = [];
  await visitManifest(bytes, uri, listed, (fields) => (record, index) => void entries.push(fields.entry(record, index)));
  return entries;
}

/**
 * The live entries of a manifest, decoded as decodeManifest decodes it (every record of every
 * block, with the same checks, so it fails on the same files), keeping of each only what cleanup
 * reads: held per manifest for a whole run, a decoded entry's statistics maps were most of a
 * 100,000-file table's cleanup memory.
 */
export async function decodeManifestLiveFiles(bytes: Uint8Array, uri: string, listed: Pick<ManifestFile, "sequenceNumber">): Promise<LiveContentFile[]> {
  const live: LiveContentFile[] = [];
  await visitManifest(bytes, uri, listed, (fields) => (record, index) => {
    const entry = fields.checked(record, index);
    if (entry.status === ENTRY_STATUS.DELETED) return;
    const size = bigintOf(fields.file.get(entry.df, 104)) ?? 0n;
    live.push({ path: entry.path, content: entry.content, fileSizeInBytes: size, recordCount: bigintOf(fields.file.get(entry.df, 103)) ?? 0n });
  });
  return live;
}

async function visitManifest(
  bytes: Uint8Array,
  uri: string,
  listed: Pick<ManifestFile, "sequenceNumber">,
  start: (fields: ManifestFields) => (record: AvroRecord, index: number) => void,
): Promise<void> {
  (await avroModule()).visitAvroRecords(bytes, uri, (header) => start(new ManifestFields(header, uri, listed)));
}

/** An entry's fields every decode checks: what makes a record a manifest entry at all. */
interface CheckedEntry {
  status: number;
  df: AvroRecord;
  path: string;
  content: number;
  kind: ContentFileKind;
  sequenceNumber: bigint;
  fileSequenceNumber: bigint;
}

/** A manifest's fields by id, from its writer schema, and the checks and conversions of its entries. */
class ManifestFields {
  readonly entryFields: FieldReader;
  readonly file: FieldReader;
  private readonly partitionFields: Map<number, FieldInfo>;
  private readonly beforeSequenceNumbers: boolean;
  private readonly uri: string;
  private readonly listed: Pick<ManifestFile, "sequenceNumber">;

  constructor(header: { meta: Record<string, string>; schema: unknown }, uri: string, listed: Pick<ManifestFile, "sequenceNumber">) {
    this.uri = uri;
    this.listed = listed;
    this.entryFields = new FieldReader(header.schema);
    const dataFileField = this.entryFields.fields.get(2);
    if (!this.entryFields.has(0) || !dataFileField) throw new CorruptFileError(uri, "not a manifest: no status (field 0) or data_file (field 2)");
    this.file = new FieldReader(dataFileField.type);
    const partitionField = this.file.fields.get(102);
    this.partitionFields = partitionField ? fieldsById(partitionField.type) : new Map<number, FieldInfo>();
    if (!this.file.has(100)) throw new CorruptFileError(uri, "not a manifest: data_file has no file_path (field 100)");
    // Written before sequence numbers existed (format v1, or listed with sequence number 0, as v1-era
    // manifests of an upgraded table are): every data sequence number is 0 (spec "Sequence Number
    // Inheritance"), whatever the entry's status, even where a writer put the v2 field in as null.
    this.beforeSequenceNumbers = header.meta["format-version"] === "1" || listed.sequenceNumber === 0n;
  }

  checked(r: AvroRecord, index: number): CheckedEntry {
    const { uri, entryFields: entry, file } = this;
    const status = numberOf(entry.get(r, 0));
    if (status === null || status < 0 || status > 2) throw new CorruptFileError(uri, `manifest entry #${index} has status ${String(status)}`);
    const df = entry.get(r, 2) as AvroRecord;
    const path = file.get(df, 100);
    if (typeof path !== "string" || path === "") throw new CorruptFileError(uri, `manifest entry #${index} has no file_path`);
    const content = numberOf(file.get(df, 134)) ?? 0;
    const kind = KINDS[content];
    if (!kind) throw new CorruptFileError(uri, `manifest entry #${index} (${path}) has content ${content}`);
    let sequenceNumber = bigintOf(entry.get(r, 3));
    let fileSequenceNumber = bigintOf(entry.get(r, 4));
    if (sequenceNumber === null || fileSequenceNumber === null) {
      if (status !== ENTRY_STATUS.ADDED && entry.has(3) && !this.beforeSequenceNumbers) {
        throw new CorruptFileError(uri, `manifest entry #${index} (${path}) is not ADDED yet has no sequence number to keep`);
      }
      sequenceNumber ??= this.listed.sequenceNumber;
      fileSequenceNumber ??= this.listed.sequenceNumber;
    }
    return { status, df, path, content, kind, sequenceNumber, fileSequenceNumber };
  }

  entry(r: AvroRecord, index: number): ManifestEntry {
    const { status, df, path, content, kind, sequenceNumber, fileSequenceNumber } = this.checked(r, index);
    const { file } = this;
    const partitionRecord = (file.get(df, 102) ?? {}) as AvroRecord;
    const partition = [...this.partitionFields.entries()].map(([fieldId, info]) => ({ fieldId, name: info.name, value: partitionRecord[info.name] ?? null }));
    const equalityIds = file.get(df, 135);
    return {
      status,
      snapshotId: bigintOf(this.entryFields.get(r, 1))?.toString() ?? null,
      sequenceNumber,
      fileSequenceNumber,
      file: {
        content,
        kind,
        path,
        fileFormat: String(file.get(df, 101) ?? ""),
        partition,
        recordCount: bigintOf(file.get(df, 103)) ?? 0n,
        fileSizeInBytes: bigintOf(file.get(df, 104)) ?? 0n,
        columnSizes: intMap(file.get(df, 108), bigintOf),
        valueCounts: intMap(file.get(df, 109), bigintOf),
        nullValueCounts: intMap(file.get(df, 110), bigintOf),
        nanValueCounts: intMap(file.get(df, 137), bigintOf),
        lowerBounds: intMap(file.get(df, 125), asBytes),
        upperBounds: intMap(file.get(df, 128), asBytes),
        equalityIds: Array.isArray(equalityIds) ? equalityIds.map((v) => numberOf(v) ?? -1) : null,
        sortOrderId: numberOf(file.get(df, 140)),
        referencedDataFile: (file.get(df, 143) as string | null | undefined) ?? null,
        contentOffset: bigintOf(file.get(df, 144)),
        contentSizeInBytes: bigintOf(file.get(df, 145)),
        firstRowId: bigintOf(file.get(df, 142)),
      },
    };
  }
}

/** avsc is loaded with the first Avro file, not with the module: a process that never reads an Iceberg table need not hold it. */
function avroModule(): Promise<typeof import("./avro.ts")> {
  return import("./avro.ts");
}
