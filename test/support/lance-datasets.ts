/**
 * Builders for real Lance datasets, written by LanceDB itself (@lancedb/lancedb 0.31.0),
 * on a local directory or on S3 (moto or fauxqs). Small on purpose: tens of rows per step.
 *
 * A dataset is described by steps; each committing step becomes one version, and the
 * returned `written` list says what each version did, so tests can check against it.
 *
 *   const ds = await buildLanceDataset({ dbUri: await makeTempDir("versions-") });
 *   ds.tableUri   // `${dbUri}/t.lance`, the table root lakewarden reads
 *   ds.table      // the LanceDB handle (listVersions(), tags(), ...)
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { Field, Float64, Int32, Schema, Utf8 } from "apache-arrow";

export type ManifestNaming = "v1" | "v2";

export type DatasetStep =
  /** Creates the table with `rows` rows. Must be the first step. */
  | { op: "create"; rows: number }
  | { op: "append"; rows: number }
  /** Replaces all data with `rows` new rows. */
  | { op: "overwrite"; rows: number }
  /** A predicate hitting part of a fragment writes a deletion file. */
  | { op: "delete"; where: string }
  | { op: "update"; where: string; values: Record<string, string> }
  /** A btree scalar index on `id`. */
  | { op: "createIndex" }
  /** Tags `version` (default: the current version). Does not commit a version. */
  | { op: "tag"; name: string; version?: number };

/** What one committed version did. */
export interface WrittenVersion {
  version: number;
  /** Lance's operation name for the commit (what lakewarden reports as operation_type). */
  operation: string;
  /** Rows in the table after this version. */
  rowCount: number;
}

export interface LanceDatasetOptions {
  /** The LanceDB database: a local directory or `s3://bucket/prefix`. */
  dbUri: string;
  /** Default "t"; the table lives at `${dbUri}/${tableName}.lance`. */
  tableName?: string;
  /** Version file naming for the new table (default "v2", LanceDB 0.31's own default). */
  naming?: ManifestNaming;
  /** Extra connection options for LanceDB (S3 endpoint and credentials). */
  storageOptions?: Record<string, string>;
  /** Default STANDARD_HISTORY. */
  steps?: readonly DatasetStep[];
  /**
   * Arrow schema metadata, stored in every manifest: a large value makes manifests larger
   * than the reader's first 64 KiB read.
   */
  schemaMetadata?: Record<string, string>;
}

export interface LanceDataset {
  dbUri: string;
  tableName: string;
  /** The table root, for `openStore` / `lakewarden versions`. */
  tableUri: string;
  naming: ManifestNaming;
  db: lancedb.Connection;
  table: lancedb.Table;
  /** One entry per committed version, ascending. */
  written: WrittenVersion[];
  /** Tag name → version. */
  tags: Record<string, number>;
  /** Applies more steps to the same table (e.g. to grow a history in stages). */
  apply(steps: readonly DatasetStep[]): Promise<void>;
  close(): void;
}

/**
 * Create → append → partial delete (deletion file) → append → btree index → tag →
 * overwrite → delete → update: every kind of version the reader must summarise.
 */
export const STANDARD_HISTORY: readonly DatasetStep[] = [
  { op: "create", rows: 20 },
  { op: "tag", name: "first" },
  { op: "append", rows: 10 },
  { op: "delete", where: "id % 4 = 1" },
  { op: "append", rows: 10 },
  { op: "createIndex" },
  { op: "tag", name: "indexed" },
  { op: "overwrite", rows: 15 },
  { op: "delete", where: "id < 3" },
  { op: "update", where: "id = 5", values: { name: "'renamed'" } },
];

const SCHEMA = new Schema([new Field("id", new Int32(), false), new Field("name", new Utf8(), true), new Field("score", new Float64(), true)]);

/** A fresh directory under the OS temp dir; remove it with `removeDir`. */
export function makeTempDir(prefix = "lakewarden-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

function schemaWith(metadata: Record<string, string> | undefined): Schema {
  return metadata ? new Schema(SCHEMA.fields, new Map(Object.entries(metadata))) : SCHEMA;
}

function rowsFrom(firstId: number, count: number, schema: Schema): lancedb.Data {
  const rows = Array.from({ length: count }, (_, i) => {
    const id = firstId + i;
    return { id, name: `row-${id}`, score: id / 2 };
  });
  return lancedb.makeArrowTable(rows, { schema });
}

export async function buildLanceDataset(options: LanceDatasetOptions): Promise<LanceDataset> {
  const steps = options.steps ?? STANDARD_HISTORY;
  const first = steps[0];
  if (first?.op !== "create") throw new Error("the first dataset step must be { op: 'create' }");
  const tableName = options.tableName ?? "t";
  const naming = options.naming ?? "v2";
  const db = await lancedb.connect(options.dbUri, {
    storageOptions: {
      ...options.storageOptions,
      // A connection-level LanceDB option that decides the naming of tables it creates.
      new_table_enable_v2_manifest_paths: naming === "v2" ? "true" : "false",
    },
  });
  const schema = schemaWith(options.schemaMetadata);
  const table = await db.createTable(tableName, rowsFrom(0, first.rows, schema));
  let nextId = first.rows;
  const written: WrittenVersion[] = [];
  const tags: Record<string, number> = {};

  const record = async (operation: string): Promise<void> => {
    written.push({ version: await table.version(), operation, rowCount: await table.countRows() });
  };
  await record("Overwrite"); // LanceDB creates a table with an Overwrite commit

  const apply = async (more: readonly DatasetStep[]): Promise<void> => {
    for (const step of more) {
      switch (step.op) {
        case "create":
          throw new Error("'create' can only be the first step");
        case "append":
          await table.add(rowsFrom(nextId, step.rows, schema));
          nextId += step.rows;
          await record("Append");
          break;
        case "overwrite":
          await table.add(rowsFrom(nextId, step.rows, schema), { mode: "overwrite" });
          nextId += step.rows;
          await record("Overwrite");
          break;
        case "delete":
          await table.delete(step.where);
          await record("Delete");
          break;
        case "update":
          await table.update({ where: step.where, valuesSql: step.values });
          await record("Update");
          break;
        case "createIndex":
          await table.createIndex("id", { config: lancedb.Index.btree() });
          await record("CreateIndex");
          break;
        case "tag": {
          const version = step.version ?? (await table.version());
          await (await table.tags()).create(step.name, version);
          tags[step.name] = version;
          break;
        }
      }
    }
  };
  await apply(steps.slice(1));

  return {
    dbUri: options.dbUri,
    tableName,
    tableUri: `${options.dbUri.replace(/\/+$/, "")}/${tableName}.lance`,
    naming,
    db,
    table,
    written,
    tags,
    apply,
    close() {
      table.close();
      db.close();
    },
  };
}
