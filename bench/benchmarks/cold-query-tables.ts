/**
 * The cold filtered-query benchmark's tables: N data files of 100 rows, written by pyarrow and
 * committed in one go by each format's writer (bench/tools/query-tables.py: deltalake's
 * create_table_with_add_actions, pyiceberg's add_files), on local disk and on the emulated S3,
 * each with a current lakewarden head. Made once per size and kept in the bench cache.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatByName } from "../../lib/formats/index.ts";
import type { TableFormat } from "../../lib/formats/table-format.ts";
import { loadTableState } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { toolPython } from "../../test/tools/python-env.ts";
import type { S3Env } from "../harness/s3-env.ts";

const SCRIPT = fileURLToPath(new URL("../tools/query-tables.py", import.meta.url));
export const ROWS_PER_FILE = 100;
const FILES_PER_PARTITION = 10;

/**
 * Heads with every live file's footer inline, as a table gets them whose commits add at most 64
 * files each (a head write reads 64 new footers at most). These tables add all their files in one
 * commit, so the budget and the read cap are raised for the benchmark's one head write.
 */
const HEAD_OPTIONS = (files: number) => ({ maxFooterReads: files, inlineBudgetBytes: 256 * 1024 * 1024 });

export type QueryFormat = "delta" | "iceberg";

export interface QueryTable {
  format: QueryFormat;
  files: number;
  partitions: number;
  localDir: string;
  /** What a reader opens locally: the table folder (Delta) or the metadata file (Iceberg). */
  localOpen: string;
  s3Uri: string;
  s3Key: string;
  /** The reader's handle on S3: the table URI (Delta) or the metadata location (Iceberg). */
  s3Open: string;
}

export interface QuerySpec {
  id: "point" | "range";
  label: string;
  /** lakewarden's --where. */
  where: string;
  /** The peers' form (bench/tools/query-peers.py). */
  json: { column: string; equals?: string; from?: number; below?: number };
  rows: number;
}

export function partitionsOf(files: number): number {
  return Math.max(2, Math.floor(files / FILES_PER_PARTITION));
}

/** A partition point lookup (the middle partition) and a range on v spanning four files. */
export function querySpecs(files: number): QuerySpec[] {
  const partitions = partitionsOf(files);
  const part = `p${String(Math.floor(partitions / 2)).padStart(5, "0")}`;
  const filesInPart = Array.from({ length: files }, (_, k) => k % partitions).filter((p) => p === Math.floor(partitions / 2)).length;
  const from = Math.floor(files / 2) * ROWS_PER_FILE + ROWS_PER_FILE / 2;
  const below = from + 3 * ROWS_PER_FILE;
  return [
    { id: "point", label: `part = '${part}'`, where: `part = '${part}'`, json: { column: "part", equals: part }, rows: filesInPart * ROWS_PER_FILE },
    { id: "range", label: `v >= ${from} AND v < ${below}`, where: `v >= ${from} AND v < ${below}`, json: { column: "v", from, below }, rows: below - from },
  ];
}

function python(args: string[]): string {
  return execFileSync(toolPython(), [SCRIPT, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "inherit"] });
}

/**
 * The format lakewarden reads `table` with, on local disk or on S3: Delta by its name; Iceberg at
 * the metadata file pyiceberg's SQL catalog names (`localOpen`, `s3Open`), as `--metadata-location`
 * binds it: a table whose metadata files a catalog names is never read by its newest file.
 */
export function readerFormat(table: QueryTable, storage: "local" | "s3"): TableFormat {
  const format = formatByName(table.format);
  if (table.format !== "iceberg") return format;
  const [root, open] = storage === "local" ? [table.localDir, table.localOpen] : [table.s3Uri, table.s3Open];
  if (!open.startsWith(`${root}/`)) throw new Error(`${open} is not under ${root}`);
  return format.at!(open.slice(root.length + 1));
}

/** Both formats' tables of `files` data files, made (or found in the cache), uploaded, with heads. */
export async function prepareQueryTables(cacheDir: string, s3: S3Env | null, files: number, log: (line: string) => void): Promise<QueryTable[]> {
  const tables: QueryTable[] = [];
  for (const format of ["delta", "iceberg"] as const) {
    const root = join(cacheDir, "cold-query", `f${files}`);
    const localDir = join(root, format);
    const marker = join(root, `${format}.json`);
    const s3Key = `cold-query/f${files}/${format}`;
    if (!existsSync(marker)) {
      await rm(localDir, { recursive: true, force: true });
      await rm(`${localDir}-catalog`, { recursive: true, force: true });
      await mkdir(root, { recursive: true });
      python(["data", localDir, String(files), String(ROWS_PER_FILE), format]);
      let localOpen = localDir;
      if (format === "delta") python(["delta", localDir]);
      else localOpen = fileURLToPath((JSON.parse(python(["iceberg", localDir, `file://${localDir}`])) as { metadata: string }).metadata);
      await writeFile(marker, JSON.stringify({ localOpen }));
      log(`cold-query: made ${format} table of ${files} files`);
    }
    const { localOpen } = JSON.parse(await readFile(marker, "utf8")) as { localOpen: string };
    await rm(join(localDir, "_lakewarden"), { recursive: true, force: true });
    const table: QueryTable = { format, files, partitions: partitionsOf(files), localDir, localOpen, s3Uri: s3?.uri(s3Key) ?? "", s3Key, s3Open: "" };
    await writeTableHead(openStore(localDir), { ...HEAD_OPTIONS(files), format: readerFormat(table, "local") });
    if (s3) table.s3Open = await uploadTable(s3, table);
    tables.push(table);
  }
  return tables;
}

/**
 * The S3 copy (undelayed: setup). Delta's log names files relative to the table, so the folder is
 * copied as it is; an Iceberg table names its files by absolute location, so its data files are
 * copied and pyiceberg commits them again at their S3 location. Then lakewarden writes the head.
 */
async function uploadTable(s3: S3Env, table: QueryTable): Promise<string> {
  await s3.removePrefix(table.s3Key);
  let open = table.s3Uri;
  if (table.format === "delta") {
    await s3.upload(table.localDir, table.s3Key);
  } else {
    await s3.upload(join(table.localDir, "data"), `${table.s3Key}/data`);
    await rm(`${table.localDir}-catalog/s3`, { recursive: true, force: true });
    open = (JSON.parse(python(["iceberg", table.localDir, table.s3Uri, s3.directEndpoint])) as { metadata: string }).metadata;
  }
  table.s3Open = open;
  await s3.removePrefix(`${table.s3Key}/_lakewarden`);
  // The footers are read from the local copy (the same files): through the undelayed endpoint
  // fauxqs answers a suffix range longer than a small file with a 416 (the proxy fixes that up,
  // see s3-server.ts, but at 20 ms a read), which would leave every footer out of the head.
  const local = openStore(table.localDir);
  const { format } = await loadTableState(local, { format: readerFormat(table, "local") });
  await writeTableHead(openStore(table.s3Uri, { s3: { endpoint: s3.directEndpoint } }), {
    ...HEAD_OPTIONS(table.files),
    format: readerFormat(table, "s3"),
    footerReader: (_store, path) => format.readDataFileFooter(local, path),
  });
  return open;
}
