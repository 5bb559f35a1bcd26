/**
 * Rows of real engines' tables with deletes and schema changes, against independent readers:
 * Delta deletion vectors (Spark and Databricks tables, stored and inline) and column mapping
 * against deltalake's to_pyarrow_table (one Python call for all of them); Iceberg position
 * deletes (Spark), a renamed column and partition evolution against icebird's icebergRead.
 * Neither pyiceberg (its delete() falls back to copy-on-write) nor deltalake (its delete()
 * rewrites files) writes these deletes, so the tables are the public test suites' own
 * (../shared/fixtures, copied to a temporary folder).
 */
import { execFileSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { icebergRead } from "icebird";
import { afterAll, describe, expect, it } from "vitest";
import type { ScanColumn, ScanValue } from "../../lib/formats/scan-files.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { scanValues } from "../../lib/scan/rows.ts";
import { openStore } from "../../lib/store/index.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { appendSnapshot, withLocalFetch } from "../support/iceberg-fixtures.ts";
import { toolPython } from "../tools/python-env.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "scan_tables.py");
const removals: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(removals.map((r) => r()));
});

async function copy(format: "delta" | "iceberg", name: string): Promise<string> {
  const { dir, remove } = await copyFixtureDir(format, name);
  removals.push(remove);
  await writeTableHead(openStore(dir));
  return dir;
}

/** Every live row by lakewarden's scan, values through `canonical`. */
async function scanned(dir: string, canonical: (c: ScanColumn, v: ScanValue | null) => unknown): Promise<{ rows: string[]; deletes: number }> {
  const table = await openTable(dir);
  const state = await table.latest();
  expect(state.source).toBe("head");
  const rows: string[] = [];
  for await (const batch of scanValues({ ...state, store: table.store })) {
    for (let i = 0; i < batch.rows; i++) rows.push(JSON.stringify(Object.fromEntries(batch.columns.map((c) => [c.name, canonical(c, batch.values.get(c.name)![i]!)]))));
  }
  const plan = await table.plan();
  return { rows: rows.sort(), deletes: plan.files.reduce((n, f) => n + f.deletes.length, 0) };
}

/** As scan_tables.py canonical writes it: ints, decimals and timestamps as text, NaN as "NaN". */
function pythonCanonical(column: ScanColumn, v: ScanValue | null): unknown {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (column.type === "float") return Number.isNaN(v) ? "NaN" : v;
  if (column.type === "date") return new Date(Number(v) * 86_400_000).toISOString().slice(0, 10);
  return String(v);
}

const DELTA_TABLES = ["table-with-dv-small", "basic-dv-with-checkpoint", "table_with_deletion_logs", "table_with_partitioning_mapping"];

describe("rows with deletes, against independent readers", () => {
  it("Delta deletion vectors and column mapping: the rows deltalake reads", { timeout: 120_000 }, async () => {
    const dirs = await Promise.all(DELTA_TABLES.map((name) => copy("delta", name)));
    const theirs = JSON.parse(execFileSync(toolPython(), [SCRIPT, "full", "delta", ...dirs], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })) as Record<
      string,
      Record<string, unknown>[]
    >;
    let deletes = 0;
    for (const [i, dir] of dirs.entries()) {
      const mine = await scanned(dir, pythonCanonical);
      deletes += mine.deletes;
      expect(mine.rows, DELTA_TABLES[i]).toEqual(theirs[dir]!.map((r) => JSON.stringify(r)).sort());
    }
    // The tables do hold deletion vectors, so rows were deleted on the way.
    expect(deletes).toBeGreaterThan(2);
  });

  for (const name of ["spark-bunnies", "spark-rename_column"]) {
    it(`Iceberg ${name}: the rows icebird reads`, async () => {
      const dir = await copy("iceberg", name);
      const state = await (await openTable(dir)).latest();
      const metadataFile = state.snapshot.versionFile.key.split("/").pop()!;
      const location = (JSON.parse(await readFile(join(dir, "metadata", metadataFile), "utf8")) as { location: string }).location.replace(/\/+$/, "");
      const theirs = await withLocalFetch(dir, location, () => icebergRead({ tableUrl: location, metadataFileName: metadataFile }));
      // icebird gives hyparquet's default forms: Dates, and decimals as floats.
      const loose = (v: unknown): unknown =>
        v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : typeof v === "bigint" || typeof v === "number" ? String(v) : v;
      const mine = await scanned(dir, (c, v) => {
        if (v === null) return null;
        if (c.type === "date") return new Date(Number(v) * 86_400_000).toISOString();
        if (c.type === "timestamp" || c.type === "timestamptz") return new Date(Number(BigInt(v as bigint) / 1000n)).toISOString();
        if (c.type === "decimal") return String(Number(v) / 10 ** (c.scale ?? 0));
        return loose(v);
      });
      expect(mine.rows, name).toEqual(theirs.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, loose(v)])))).sort());
    });
  }

  it("Iceberg position and equality deletes added to the Spark table: the rows icebird reads, less the equality-deleted ones", async () => {
    const dir = await copy("iceberg", "spark-bunnies");
    const before = await (await openTable(dir)).latest();
    const metadataFile = before.snapshot.versionFile.key.split("/").pop()!;
    const location = (JSON.parse(await readFile(join(dir, "metadata", metadataFile), "utf8")) as { location: string }).location.replace(/\/+$/, "");
    const [dataFile] = before.format.scanFiles(before.snapshot).dataFiles;
    const breed = (await scanned(dir, (_c, v) => (typeof v === "bigint" ? String(v) : v))).rows.map((r) => (JSON.parse(r) as Record<string, string>)["Breed Name"]!)[10]!;
    // pyarrow writes the delete files, with the spec's field ids (position deletes' reserved ones).
    const write = `
import sys, pyarrow as pa, pyarrow.parquet as pq
ids = lambda i: {"PARQUET:field_id": str(i)}
pos = pa.schema([pa.field("file_path", pa.string(), False, ids(2147483546)), pa.field("pos", pa.int64(), False, ids(2147483545))])
pq.write_table(pa.table({"file_path": [sys.argv[3]] * 3, "pos": [0, 3, 7]}, schema=pos), sys.argv[1])
eq = pa.schema([pa.field("Breed Name", pa.string(), True, ids(1))])
pq.write_table(pa.table({"Breed Name": [sys.argv[4]]}, schema=eq), sys.argv[2])
`;
    execFileSync(toolPython(), ["-c", write, join(dir, "data/lw-pos-deletes.parquet"), join(dir, "data/lw-eq-deletes.parquet"), `${location}/${dataFile!.paths[0]}`, breed]);
    const size = async (key: string) => (await stat(join(dir, key))).size;
    const appended = await appendSnapshot(dir, {
      files: [],
      deleteFiles: [
        { path: `${location}/data/lw-pos-deletes.parquet`, content: 1, recordCount: 3, sizeInBytes: await size("data/lw-pos-deletes.parquet") },
        { path: `${location}/data/lw-eq-deletes.parquet`, content: 2, recordCount: 1, sizeInBytes: await size("data/lw-eq-deletes.parquet"), equalityIds: [1] },
      ],
    });
    await writeTableHead(openStore(dir));
    const newMetadata = appended.metadataKey.split("/").pop()!;
    const theirs = await withLocalFetch(dir, location, () => icebergRead({ tableUrl: location, metadataFileName: newMetadata }));
    const loose = (v: unknown): unknown => (v === null || v === undefined ? null : typeof v === "bigint" || typeof v === "number" ? String(v) : v);
    const mine = await scanned(dir, (_c, v) => loose(v));
    expect(mine.deletes).toBe(2);
    // icebird applies the position deletes (17 of 20 rows) but not this equality delete, whose rule
    // (spec "Equality Delete Files": a later sequence number, an unpartitioned table) is applied here.
    expect(theirs.length).toBe(17);
    const expected = theirs.filter((r) => r["Breed Name"] !== breed);
    expect(mine.rows).toEqual(expected.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, loose(v)])))).sort());
    // Three rows by position, and every row of that breed by equality.
    expect(mine.rows.length).toBeLessThanOrEqual(20 - 3 - 1);
    expect(mine.rows.some((r) => r.includes(JSON.stringify(breed)))).toBe(false);
  });

  it("Iceberg partition evolution with partition columns outside the data files: the rows pyiceberg reads", async () => {
    // The table's location is relative (data/persistent/...): pyiceberg resolves it from its working folder.
    const { dir, remove } = await copyFixtureDir("iceberg", "hive_partitioned_table");
    removals.push(remove);
    const work = await mkdtemp(join(tmpdir(), "lw-rows-relative-"));
    removals.push(() => rm(work, { recursive: true, force: true }));
    const tableDir = join(work, "data", "persistent", "hive_partitioned_table");
    await cp(dir, tableDir, { recursive: true });
    await writeTableHead(openStore(tableDir));
    const state = await (await openTable(tableDir)).latest();
    const theirs = JSON.parse(
      execFileSync(toolPython(), [SCRIPT, "full", "iceberg", join("data", "persistent", "hive_partitioned_table", state.snapshot.versionFile.key)], {
        cwd: work,
        encoding: "utf8",
      }),
    ) as Record<string, Record<string, unknown>[]>;
    const mine = await scanned(tableDir, pythonCanonical);
    expect(mine.rows).toEqual(
      Object.values(theirs)[0]!
        .map((r) => JSON.stringify(r))
        .sort(),
    );
  });
});
