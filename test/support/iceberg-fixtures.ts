/**
 * The real Iceberg tables in the shared fixtures folder (`<repo>/../shared/fixtures/iceberg/`,
 * see its README), copied into a temporary folder before a test touches them: the originals
 * are never opened for writing. Copies are made writable (the originals are read-only) and,
 * since git keeps no modification times, every file's mtime is set to `ageMs` ago.
 */
import { randomUUID } from "node:crypto";
import { chmod, cp, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import avro from "avsc";
import { avroMetadata, avroRead, icebergManifests, icebergMetadata } from "icebird";
import { translateS3Url } from "icebird/src/fetch.js";
import { bigintLongOptions } from "../../lib/formats/iceberg/avro.ts";
import { icebergFormat } from "../../lib/formats/iceberg/iceberg-format.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { parseJsonLossless, stringifyJsonLossless, type JsonValue } from "../../lib/formats/iceberg/lossless-json.ts";

export const ICEBERG_FIXTURES_DIR = fileURLToPath(new URL("../../../shared/fixtures/iceberg/", import.meta.url));

/** Every fixture table, by folder name. */
export const ICEBERG_FIXTURES = [
  "spark-bunnies",
  "athena-example",
  "spark-rename_column",
  "hive_partitioned_table",
  "legacy_v1",
  "equality_deletes-mytable",
  "big_query_error",
] as const;
export type IcebergFixture = (typeof ICEBERG_FIXTURES)[number];

/** Fixtures a reader must refuse (README): a missing manifest list, paths outside the table. */
export const BROKEN_FIXTURES: readonly IcebergFixture[] = ["equality_deletes-mytable", "big_query_error"];

/**
 * The metadata file the catalog names as current, for each fixture whose metadata files are
 * catalog-named (Athena's `NNNNN-uuid`): a reader without it refuses the table.
 */
export const CATALOG_POINTERS: Partial<Record<IcebergFixture, string>> = {
  "athena-example": "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json",
};

/** What openIcebergTable is given for a fixture: its catalog's pointer, where it has one. */
export function fixtureOpenOptions(name: IcebergFixture): { metadataKey?: string } {
  const pointer = CATALOG_POINTERS[name];
  return pointer === undefined ? {} : { metadataKey: pointer };
}

/** The Iceberg format a fixture is read with: bound to its catalog's pointer, where it has one. */
export function fixtureFormat(name: IcebergFixture): TableFormat {
  const pointer = CATALOG_POINTERS[name];
  return pointer === undefined ? icebergFormat : icebergFormat.at!(pointer);
}

/**
 * The Iceberg format bound to the metadata file a catalog names (a URI under `tableDir`, as
 * pyiceberg's `metadata_location` gives it), as `--metadata-location` binds it: how a table whose
 * metadata files a catalog names is read.
 */
export function catalogPointerFormat(tableDir: string, metadataUri: string): TableFormat {
  const path = metadataUri.startsWith("file:") ? fileURLToPath(metadataUri) : metadataUri;
  const key = relative(tableDir, path).split(sep).join("/");
  if (key.startsWith("..")) throw new Error(`${metadataUri} is not under ${tableDir}`);
  return icebergFormat.at!(key);
}

export function fixturePath(name: IcebergFixture): string {
  return join(ICEBERG_FIXTURES_DIR, name);
}

export interface FixtureCopy {
  /** The copied table's root folder. */
  dir: string;
  remove(): Promise<void>;
}

/** Copies fixture `name` into a fresh temp folder; every file writable and `ageMs` old (default 30 days). */
export async function copyIcebergFixture(name: IcebergFixture, options: { ageMs?: number } = {}): Promise<FixtureCopy> {
  const parent = await mkdtemp(join(tmpdir(), `lw-iceberg-${name}-`));
  const dir = join(parent, name);
  await cp(fixturePath(name), dir, { recursive: true });
  const when = new Date(Date.now() - (options.ageMs ?? 30 * 24 * 3600 * 1000));
  await makeWritable(dir, when);
  return { dir, remove: () => rm(parent, { recursive: true, force: true }) };
}

async function makeWritable(dir: string, when: Date): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(path, when);
    else {
      await chmod(path, 0o644);
      await utimes(path, when, when);
    }
  }
}

/** Every file under `dir`, as keys relative to it, sorted. */
export async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const key = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, key)));
    else out.push(key);
  }
  return out.sort();
}

/** True when `dir/key` exists as a file. */
export async function fileExists(dir: string, key: string): Promise<boolean> {
  return stat(join(dir, key)).then(
    (s) => s.isFile(),
    () => false,
  );
}

// ---------------------------------------------------------------------------------------------
// Appending snapshots to a copy, for cases the fixtures lack (more snapshots, refs, paths
// outside the table). Files are written the way Iceberg Java writes them: a new manifest with
// the table's own manifest schema, a new manifest list carrying the parent's manifests plus the
// new one, and the next `v<N+1>.metadata.json` with the version hint moved. Tests prove the
// result with an independent reader (icebird), not with the code under test.
// ---------------------------------------------------------------------------------------------

export interface AppendedFile {
  /** The path as the manifest will hold it (a URI under the table's location, or anywhere). */
  path: string;
  recordCount: number;
  sizeInBytes: number;
}

export interface AppendOptions {
  files: AppendedFile[];
  /** Default: a random id above 2^53, so every test exercises exact 64-bit ids. */
  snapshotId?: bigint;
  timestampMs?: number;
  /** Refs to set or replace in the new metadata (main follows the new snapshot unless given). */
  refs?: Record<string, Record<string, string | number | bigint>>;
  /**
   * Commit to this branch instead of main: the parent is the branch's head (or `parentId`), the
   * branch ref moves to the new snapshot (keeping its retention settings, and taking those `refs`
   * gives for it) and main, the current
   * snapshot and the snapshot log stay as they are.
   */
  branch?: string;
  /** The new snapshot's parent (default: the head of the branch committed to). */
  parentId?: string;
  properties?: Record<string, string>;
  /**
   * Deletion vectors (spec v3: a Puffin blob per data file) to add in a delete manifest whose
   * schema gains fields 143-145 (referenced_data_file, content_offset, content_size_in_bytes).
   */
  deletionVectors?: { path: string; referencedDataFile: string; cardinality: number; sizeInBytes: number; contentOffset: number; contentSizeInBytes: number }[];
  /** Parquet delete files (spec v2) to add in a delete manifest: position deletes (content 1) or equality deletes (content 2, with their field ids). */
  deleteFiles?: { path: string; content: 1 | 2; recordCount: number; sizeInBytes: number; equalityIds?: number[] }[];
}

export interface Appended {
  snapshotId: string;
  metadataKey: string;
  manifestListKey: string;
  manifestKey: string;
}

export async function decodeAvroFile(path: string): Promise<{ type: avro.Type; meta: Record<string, Buffer>; records: Record<string, unknown>[] }> {
  const bytes = await readFile(path);
  const decoder = new avro.streams.BlockDecoder({ parseHook: (schema: avro.Schema) => avro.Type.forSchema(schema, bigintLongOptions()) });
  let type: avro.Type | undefined;
  let meta: Record<string, Buffer> = {};
  decoder.on("metadata", (t: avro.Type, _codec: string, header: { meta: Record<string, Buffer> }) => {
    type = t;
    meta = header.meta;
  });
  const records: Record<string, unknown>[] = [];
  await new Promise<void>((resolve, reject) => {
    decoder.on("data", (r: Record<string, unknown>) => records.push(r));
    decoder.on("end", resolve);
    decoder.on("error", reject);
    decoder.end(bytes);
  });
  return { type: type!, meta, records };
}

export async function encodeAvroFile(path: string, type: avro.Type, meta: Record<string, Buffer>, records: Record<string, unknown>[]): Promise<number> {
  const metadata: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(meta)) if (!k.startsWith("avro.")) metadata[k] = v;
  const encoder = new avro.streams.BlockEncoder(type, { codec: "deflate", metadata } as Partial<avro.EncoderOptions>);
  // avsc writes the header schema from the type, which drops Iceberg's `field-id` attributes;
  // give it the template's schema text instead (avsc writes `_schema` when set).
  (encoder as unknown as { _schema: unknown })._schema = JSON.parse(meta["avro.schema"]!.toString("utf8"));
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    encoder.on("data", (c: Buffer) => chunks.push(c));
    encoder.on("end", resolve);
    encoder.on("error", reject);
  });
  for (const r of records) encoder.write(r);
  encoder.end();
  await done;
  const bytes = Buffer.concat(chunks);
  await writeFile(path, bytes);
  return bytes.length;
}

/** A value for an Avro field the caller did not give: null for optional fields, an empty record for `partition`. */
function defaultFor(type: unknown, name: string): unknown {
  if (Array.isArray(type) && type.includes("null")) return null;
  if (typeof type === "object" && type !== null && (type as { type?: string }).type === "record") return {};
  throw new Error(`appendSnapshot: required field ${name} has no value`);
}

function fill(schema: { fields: { name: string; type: unknown }[] }, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) out[field.name] = field.name in given ? given[field.name] : defaultFor(field.type, field.name);
  return out;
}

/** Appends one snapshot (an `append` of `files`) on top of the copy's current metadata. */
export async function appendSnapshot(dir: string, options: AppendOptions): Promise<Appended> {
  const hint = (await readFile(join(dir, "metadata/version-hint.text"), "utf8")).trim();
  const current = Number(hint);
  const metadataKey = `metadata/v${current + 1}.metadata.json`;
  const json = parseJsonLossless(await readFile(join(dir, `metadata/v${current}.metadata.json`), "utf8")) as Record<string, JsonValue>;
  const location = String(json.location).replace(/\/+$/, "");
  const snapshots = json.snapshots as Record<string, JsonValue>[];
  const onBranch = options.branch !== undefined && options.branch !== "main" ? options.branch : null;
  const existingRefs = (json.refs as Record<string, Record<string, JsonValue>> | undefined) ?? {};
  const currentId = options.parentId ?? (onBranch !== null && existingRefs[onBranch] ? String(existingRefs[onBranch]["snapshot-id"]) : String(json["current-snapshot-id"]));
  const parent = snapshots.find((s) => String(s["snapshot-id"]) === currentId)!;
  const keyOf = (path: string) => path.slice(location.length + 1);
  const snapshotId = options.snapshotId ?? (1n << 60n) + BigInt(Math.floor(Math.random() * 1e15));
  const sequence = Number(json["last-sequence-number"]) + 1;
  const timestampMs = options.timestampMs ?? Date.now();
  const uuid = randomUUID();

  // The manifest: the parent's first data manifest gives the schema and header.
  const parentList = await decodeAvroFile(join(dir, keyOf(String(parent["manifest-list"]))));
  const template = parentList.records.find((r) => r.content === 0)!;
  const manifestTemplate = await decodeAvroFile(join(dir, keyOf(String(template.manifest_path))));
  const entrySchema = JSON.parse(manifestTemplate.meta["avro.schema"]!.toString("utf8")) as { fields: { name: string; type: unknown }[] };
  const dataFileSchema = entrySchema.fields.find((f) => f.name === "data_file")!.type as { fields: { name: string; type: unknown }[] };
  const manifestKey = `metadata/${uuid}-m0.avro`;
  const entries = options.files.map((f) =>
    fill(entrySchema, {
      status: 1,
      snapshot_id: snapshotId,
      data_file: fill(dataFileSchema, {
        content: 0,
        file_path: f.path,
        file_format: "PARQUET",
        partition: {},
        record_count: BigInt(f.recordCount),
        file_size_in_bytes: BigInt(f.sizeInBytes),
      }),
    }),
  );
  const manifestLength = await encodeAvroFile(join(dir, manifestKey), manifestTemplate.type, manifestTemplate.meta, entries);

  // Deletion vectors: a delete manifest with the v3 fields added to the table's data_file record.
  const extraListEntries: Record<string, unknown>[] = [];
  const dvs = options.deletionVectors ?? [];
  if (dvs.length > 0) {
    const dvSchema = JSON.parse(manifestTemplate.meta["avro.schema"]!.toString("utf8")) as { fields: { name: string; type: { fields: object[] } }[] };
    const dvFile = dvSchema.fields.find((f) => f.name === "data_file")!.type;
    const v3Fields = [
      { name: "referenced_data_file", type: ["null", "string"], default: null, "field-id": 143 },
      { name: "content_offset", type: ["null", "long"], default: null, "field-id": 144 },
      { name: "content_size_in_bytes", type: ["null", "long"], default: null, "field-id": 145 },
    ];
    for (const field of v3Fields) if (!dvFile.fields.some((f) => (f as { name: string }).name === field.name)) dvFile.fields.push(field);
    const dvType = avro.Type.forSchema(dvSchema as avro.Schema, bigintLongOptions());
    const dvMeta = { ...manifestTemplate.meta, "avro.schema": Buffer.from(JSON.stringify(dvSchema)), content: Buffer.from("deletes") };
    const dvKey = `metadata/${uuid}-m1.avro`;
    const dvEntries = dvs.map((d) =>
      fill(dvSchema as never, {
        status: 1,
        snapshot_id: snapshotId,
        data_file: fill(dvFile as never, {
          content: 1,
          file_path: d.path,
          file_format: "PUFFIN",
          partition: {},
          record_count: BigInt(d.cardinality),
          file_size_in_bytes: BigInt(d.sizeInBytes),
          referenced_data_file: d.referencedDataFile,
          content_offset: BigInt(d.contentOffset),
          content_size_in_bytes: BigInt(d.contentSizeInBytes),
        }),
      }),
    );
    const dvLength = await encodeAvroFile(join(dir, dvKey), dvType, dvMeta, dvEntries);
    extraListEntries.push({ path: `${location}/${dvKey}`, length: dvLength, count: dvs.length, rows: dvs.reduce((n, d) => n + d.cardinality, 0) });
  }

  // Parquet delete files: a delete manifest in the data manifest's own (v2) schema.
  const deleteFiles = options.deleteFiles ?? [];
  if (deleteFiles.length > 0) {
    const deletesKey = `metadata/${uuid}-m2.avro`;
    const deleteEntries = deleteFiles.map((d) =>
      fill(entrySchema, {
        status: 1,
        snapshot_id: snapshotId,
        data_file: fill(dataFileSchema, {
          content: d.content,
          file_path: d.path,
          file_format: "PARQUET",
          partition: {},
          record_count: BigInt(d.recordCount),
          file_size_in_bytes: BigInt(d.sizeInBytes),
          ...(d.equalityIds ? { equality_ids: d.equalityIds } : {}),
        }),
      }),
    );
    const deletesMeta = { ...manifestTemplate.meta, content: Buffer.from("deletes") };
    const deletesLength = await encodeAvroFile(join(dir, deletesKey), manifestTemplate.type, deletesMeta, deleteEntries);
    extraListEntries.push({ path: `${location}/${deletesKey}`, length: deletesLength, count: deleteFiles.length, rows: deleteFiles.reduce((n, d) => n + d.recordCount, 0) });
  }

  // The manifest list: the parent's manifests, then the new one.
  const listSchema = JSON.parse(parentList.meta["avro.schema"]!.toString("utf8")) as { fields: { name: string; type: unknown }[] };
  const added = options.files.reduce((n, f) => n + f.recordCount, 0);
  const newEntry = fill(listSchema, {
    manifest_path: `${location}/${manifestKey}`,
    manifest_length: BigInt(manifestLength),
    partition_spec_id: 0,
    content: 0,
    sequence_number: BigInt(sequence),
    min_sequence_number: BigInt(sequence),
    added_snapshot_id: snapshotId,
    added_data_files_count: options.files.length,
    added_files_count: options.files.length,
    existing_data_files_count: 0,
    existing_files_count: 0,
    deleted_data_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: BigInt(added),
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: [],
  });
  const manifestListKey = `metadata/snap-${snapshotId}-1-${uuid}.avro`;
  const listMeta = {
    ...parentList.meta,
    "snapshot-id": Buffer.from(String(snapshotId)),
    "parent-snapshot-id": Buffer.from(currentId),
    "sequence-number": Buffer.from(String(sequence)),
  };
  const deleteEntries = extraListEntries.map((e) =>
    fill(listSchema, {
      ...newEntry,
      manifest_path: e.path,
      manifest_length: BigInt(e.length as number),
      content: 1,
      added_data_files_count: e.count,
      added_files_count: e.count,
      added_rows_count: BigInt(e.rows as number),
    }),
  );
  // A commit of delete files alone has no data manifest (an empty Avro file would be no container at all).
  const listed = options.files.length > 0 ? [newEntry] : [];
  if (listed.length === 0) await rm(join(dir, manifestKey), { force: true });
  await encodeAvroFile(join(dir, manifestListKey), parentList.type, listMeta, [...parentList.records, ...listed, ...deleteEntries]);

  // The metadata.
  const summary = parent.summary as Record<string, string>;
  const totalFiles = Number(summary["total-data-files"] ?? 0) + options.files.length;
  const next: Record<string, JsonValue> = { ...json };
  next.snapshots = [
    ...snapshots,
    {
      "sequence-number": sequence,
      "snapshot-id": snapshotId,
      "parent-snapshot-id": BigInt(currentId),
      "timestamp-ms": timestampMs,
      summary: {
        operation: "append",
        "added-data-files": String(options.files.length),
        "added-records": String(added),
        "total-data-files": String(totalFiles),
        "total-records": String(Number(summary["total-records"] ?? 0) + added),
        "total-delete-files": String(Number(summary["total-delete-files"] ?? 0) + dvs.length),
        "total-position-deletes": summary["total-position-deletes"] ?? "0",
        "total-equality-deletes": summary["total-equality-deletes"] ?? "0",
      },
      "manifest-list": `${location}/${manifestListKey}`,
      "schema-id": parent["schema-id"] ?? 0,
    },
  ];
  next["last-sequence-number"] = sequence;
  next["last-updated-ms"] = timestampMs;
  if (onBranch !== null) {
    // Settings given for the branch committed to apply to it; its head is the new snapshot.
    const given = (options.refs?.[onBranch] ?? {}) as Record<string, JsonValue>;
    next.refs = {
      ...existingRefs,
      ...(options.refs as Record<string, JsonValue> | undefined),
      [onBranch]: { ...existingRefs[onBranch], ...given, "snapshot-id": snapshotId, type: "branch" },
    };
  } else {
    next["current-snapshot-id"] = snapshotId;
    next.refs = { ...existingRefs, main: { ...existingRefs.main, "snapshot-id": snapshotId, type: "branch" }, ...(options.refs as Record<string, JsonValue> | undefined) };
    next["snapshot-log"] = [...((json["snapshot-log"] as JsonValue[]) ?? []), { "timestamp-ms": timestampMs, "snapshot-id": snapshotId }];
  }
  next["metadata-log"] = [
    ...((json["metadata-log"] as JsonValue[]) ?? []),
    { "timestamp-ms": Number(json["last-updated-ms"]), "metadata-file": `${location}/metadata/v${current}.metadata.json` },
  ];
  if (options.properties) next.properties = { ...(json.properties as Record<string, JsonValue>), ...options.properties };
  await writeWhole(join(dir, metadataKey), stringifyJsonLossless(next, 2));
  await writeWhole(join(dir, "metadata/version-hint.text"), String(current + 1));
  return { snapshotId: String(snapshotId), metadataKey, manifestListKey, manifestKey };
}

/**
 * Writes a file as a writer on a file system commits it (Iceberg's HadoopTableOperations: a
 * temporary file, then a rename), so a reader polling the folder (serve, every 30 ms in its
 * tests) never reads half of it: writeFile in place once let serve read a cut v7.metadata.json.
 */
async function writeWhole(path: string, data: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
  await writeFile(temporary, data);
  await rename(temporary, path);
}

/**
 * Writes the next metadata file of a copy with `edit` applied to the current document (refs,
 * properties), the current file appended to the metadata log first, as a writer does.
 */
export async function rewriteMetadata(dir: string, edit: (json: Record<string, JsonValue>) => void): Promise<string> {
  const current = Number((await readFile(join(dir, "metadata/version-hint.text"), "utf8")).trim());
  const json = parseJsonLossless(await readFile(join(dir, `metadata/v${current}.metadata.json`), "utf8")) as Record<string, JsonValue>;
  const location = String(json.location).replace(/\/+$/, "");
  json["metadata-log"] = [
    ...((json["metadata-log"] as JsonValue[]) ?? []),
    { "timestamp-ms": json["last-updated-ms"]!, "metadata-file": `${location}/metadata/v${current}.metadata.json` },
  ];
  edit(json);
  const key = `metadata/v${current + 1}.metadata.json`;
  await writeWhole(join(dir, key), stringifyJsonLossless(json, 2));
  await writeWhole(join(dir, "metadata/version-hint.text"), String(current + 1));
  return key;
}

// ---------------------------------------------------------------------------------------------
// The independent reader: icebird 0.3.1, its `fetch` pointed at the copy's files. icebird
// names objects by the table's location (s3:// and s3a:// become https://<bucket>.s3.amazonaws.com);
// the stub serves those from the local folder and answers 404 for anything else. icebird shows
// a missing file only as a DataView offset error, so callers check existence themselves.
// ---------------------------------------------------------------------------------------------

export interface OracleFile {
  /** Key under the table root. */
  key: string;
  content: number;
  recordCount: bigint;
  sizeInBytes: bigint;
}

// Calls may overlap (Promise.all over snapshots): one stub serves every open call's prefixes and
// the real fetch comes back when the last call ends. Swapping the global per call would let the
// first call to end restore the real fetch under the others, which then ask the network.
const served: { prefixes: string[]; dir: string }[] = [];
let realFetch: typeof fetch | null = null;

async function serveLocally(input: string | URL | Request): Promise<Response> {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  for (const { prefixes, dir } of served) {
    const prefix = prefixes.find((p) => url.startsWith(p));
    if (prefix === undefined) continue;
    try {
      return new Response(await readFile(join(dir, decodeURIComponent(url.slice(prefix.length)))));
    } catch {
      return new Response("not found", { status: 404 });
    }
  }
  return new Response("not served", { status: 404 });
}

export async function withLocalFetch<T>(dir: string, location: string, fn: () => Promise<T>): Promise<T> {
  const entry = { prefixes: [translateS3Url(location), location].map((p) => p.replace(/\/+$/, "") + "/"), dir };
  served.push(entry);
  if (realFetch === null) {
    realFetch = globalThis.fetch;
    globalThis.fetch = serveLocally as typeof fetch;
  }
  try {
    return await fn();
  } finally {
    served.splice(served.indexOf(entry), 1);
    if (served.length === 0 && realFetch !== null) {
      globalThis.fetch = realFetch;
      realFetch = null;
    }
  }
}

/**
 * The live data and delete files of a snapshot of `metadataFile` (a name under metadata/), read
 * by icebird: the current snapshot, or the one at `snapshotIndex` in the metadata's list.
 */
export async function icebirdLiveFiles(dir: string, metadataFile: string, snapshotIndex?: number): Promise<OracleFile[]> {
  const location = (JSON.parse(await readFile(join(dir, "metadata", metadataFile), "utf8")) as { location: string }).location.replace(/\/+$/, "");
  return withLocalFetch(dir, location, async () => {
    const metadata = await icebergMetadata({ tableUrl: location, metadataFileName: metadataFile });
    if (snapshotIndex !== undefined) metadata["current-snapshot-id"] = metadata.snapshots![snapshotIndex]!["snapshot-id"];
    // icebird expects manifest-list records; a format v1 snapshot lists manifest paths inline.
    for (const snapshot of metadata.snapshots ?? []) {
      const inline = (snapshot as { manifests?: unknown[] }).manifests;
      if (Array.isArray(inline)) (snapshot as { manifests?: unknown[] }).manifests = inline.map((p) => (typeof p === "string" ? { manifest_path: p } : p));
    }
    const manifests = await icebergManifests(metadata);
    return manifests
      .flatMap((m) => m.entries)
      .filter((e) => e.status !== 2)
      .map((e) => ({
        key: e.data_file.file_path.slice(location.length + 1),
        content: e.data_file.content ?? 0,
        recordCount: BigInt(e.data_file.record_count),
        sizeInBytes: BigInt(e.data_file.file_size_in_bytes),
      }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  });
}

/** The manifest list and manifests of snapshot `snapshotIndex`, as keys, read by icebird's Avro decoder. */
export async function icebirdMetadataFiles(dir: string, metadataFile: string, snapshotIndex: number): Promise<string[]> {
  const metadata = JSON.parse(await readFile(join(dir, "metadata", metadataFile), "utf8")) as {
    location: string;
    snapshots: { "manifest-list"?: string; manifests?: string[] }[];
  };
  const location = metadata.location.replace(/\/+$/, "");
  const snapshot = metadata.snapshots[snapshotIndex]!;
  const keyOf = (p: string) => p.slice(location.length + 1);
  if (!snapshot["manifest-list"]) return (snapshot.manifests ?? []).map(keyOf);
  const bytes = new Uint8Array(await readFile(join(dir, keyOf(snapshot["manifest-list"]))));
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const { metadata: header, syncMarker } = avroMetadata(reader);
  const list = avroRead({ reader, metadata: header, syncMarker }) as { manifest_path: string }[];
  return [keyOf(snapshot["manifest-list"]), ...list.map((m) => keyOf(m.manifest_path))];
}

/**
 * Snapshots of a metadata file read without this project's JSON parser: ids are quoted by a
 * text pre-pass before JSON.parse, so they stay exact.
 */
export async function snapshotsByTextPass(path: string): Promise<{ id: string; parent: string | null; timestampMs: number; operation: string; summary: Record<string, string> }[]> {
  let text = await readFile(path, "utf8");
  text = text.replace(/("(?:snapshot-id|parent-snapshot-id|current-snapshot-id)"\s*:\s*)(-?\d+)/g, '$1"$2"');
  const json = JSON.parse(text) as { snapshots?: Record<string, unknown>[] };
  return (json.snapshots ?? []).map((s) => ({
    id: s["snapshot-id"] as string,
    parent: (s["parent-snapshot-id"] as string | undefined) ?? null,
    timestampMs: s["timestamp-ms"] as number,
    operation: (s.summary as Record<string, string>).operation!,
    summary: s.summary as Record<string, string>,
  }));
}
