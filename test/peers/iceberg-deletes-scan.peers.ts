/**
 * The scan oracle on merge-on-read tables written by Iceberg Java 1.10.0 at test time
 * (IcebergDeletesTable.java: global and partition-scoped equality deletes by id, on a string with
 * null, on a date, on two columns and on a column added after the older files; position deletes
 * naming many files and file-scoped ones; an upsert; a partition spec added; a compaction, and one
 * that keeps its starting data sequence number), small and with 2,000 data files. Iceberg Java
 * reads the current snapshot file by file with its own delete filter (IcebergDeletesRead.java);
 * test/scan/scan_tables.py's evaluate matches randomized filters (test/scan/random-filters.ts)
 * against those rows (iceberg_deletes_filter.py). lakewarden, from the head:
 *   - the full scan gives the same rows, value for value;
 *   - table.plan() without a filter gives the same live data files;
 *   - for every filter, table.plan({ filter }) keeps every file holding a matching row, and
 *     table.scan({ filter }) returns exactly the matching rows' ids.
 * Not in `npm test`: the writer and the reader are two JVMs and the Iceberg jars of
 * test/peers/iceberg-writer/pom.xml. Counts in .tools/peers-results/iceberg-deletes-scan.json.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ScanColumn, ScanValue } from "../../lib/formats/scan-files.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { formatFilter } from "../../lib/scan/expression.ts";
import { scanValues } from "../../lib/scan/rows.ts";
import { openStore } from "../../lib/store/index.ts";
import { random, randomFilter } from "../scan/random-filters.ts";
import { toolPython } from "../tools/python-env.ts";
import { currentMetadataName } from "../support/iceberg-histories.ts";
import { type DeletesTable, type FilesRead, readWithIcebergJava, writeDeletesTable } from "./iceberg-deletes-java.ts";
import { REPO_ROOT, RESULTS_DIR } from "./peer-scripts.ts";

const TABLES = [
  { name: "small", dataFiles: 40, rowsPerFile: 10, seed: 21, predicates: 800 },
  { name: "2,000 data files", dataFiles: 2000, rowsPerFile: 10, seed: 22, predicates: 200 },
] as const;

let scratch = "";
const tables: DeletesTable[] = [];
const counts: Record<string, unknown>[] = [];
afterAll(async () => {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, "iceberg-deletes-scan.json"), `${JSON.stringify(counts, null, 2)}\n`);
  await Promise.all(tables.map((t) => t.remove()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A value as IcebergDeletesRead.canonical writes it: integers, decimals and timestamps as text, NaN as "NaN". */
function canonical(column: ScanColumn, v: ScanValue | null): unknown {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (column.type === "float") return Number.isNaN(v) ? "NaN" : v;
  if (column.type === "date") return new Date(Number(v) * 86_400_000).toISOString().slice(0, 10);
  if (column.type === "decimal" && typeof v === "bigint") {
    const scale = column.scale ?? 0;
    const digits = (v < 0n ? -v : v).toString().padStart(scale + 1, "0");
    return `${v < 0n ? "-" : ""}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  }
  return String(v);
}

const byId = (a: Record<string, unknown>, b: Record<string, unknown>): number => Number(a.id) - Number(b.id);

describe("scans of Iceberg Java's merge-on-read tables against Iceberg Java's own read", { timeout: 1_500_000 }, () => {
  it.each(TABLES)("$name: every live row, and $predicates random filters' plans and rows", async ({ name, dataFiles, rowsPerFile, seed, predicates }) => {
    scratch ||= await mkdtemp(join(tmpdir(), "lw-iceberg-deletes-scan-"));
    const table = await writeDeletesTable({ dataFiles, rowsPerFile, seed });
    tables.push(table);
    const [read] = await readWithIcebergJava<FilesRead>([{ id: "0", dir: table.dir, metadata: await currentMetadataName(table.dir), mode: "files" }], scratch);
    expect(read!.error).toBeUndefined();
    const javaRows = read!.files!.flatMap((f) => f.rows);
    // Iceberg's two readers agree: file by file with its delete filter, and IcebergGenerics.
    expect(javaRows.length).toBe(read!.generics_rows);

    const rand = random(seed);
    const filters = Array.from({ length: predicates }, () => randomFilter(table.samples, rand));
    const readFile = join(scratch, `read-${seed}.json`);
    const predicatesFile = join(scratch, `predicates-${seed}.json`);
    await writeFile(readFile, JSON.stringify([read]));
    await writeFile(predicatesFile, JSON.stringify(filters));
    const script = join(REPO_ROOT, "test", "peers", "iceberg_deletes_filter.py");
    const oracle = JSON.parse(execFileSync(toolPython(), [script, readFile, predicatesFile], { encoding: "utf8", maxBuffer: 512 * 1024 * 1024 })) as {
      results: { ids: string[]; files: string[] }[];
    };

    await writeTableHead(openStore(table.dir));
    const lw = await openTable(table.dir);
    const state = await lw.latest();
    expect(state.source).toBe("head");
    const plan = await lw.plan();
    expect(plan.files.flatMap((f) => f.paths).sort()).toEqual(read!.files!.map((f) => f.key).sort());
    expect(plan.files.some((f) => f.deletes.some((d) => d.kind === "equality-deletes"))).toBe(true);
    expect(plan.files.some((f) => f.deletes.some((d) => d.kind === "position-deletes"))).toBe(true);

    const mine: Record<string, unknown>[] = [];
    for await (const batch of scanValues({ ...state, store: lw.store })) {
      for (let i = 0; i < batch.rows; i++) mine.push(Object.fromEntries(batch.columns.map((c) => [c.name, canonical(c, batch.values.get(c.name)![i]!)])));
    }
    expect(mine.sort(byId)).toEqual([...javaRows].sort(byId));

    const wrongPlans: string[] = [];
    const wrongRows: string[] = [];
    let matching = 0;
    let pruned = 0;
    for (const [i, filter] of filters.entries()) {
      const where = formatFilter(filter);
      const expected = oracle.results[i]!;
      const planned = new Set((await lw.plan({ filter: where })).files.flatMap((f) => f.paths));
      if (expected.files.some((key) => !planned.has(key))) wrongPlans.push(`filter ${i}: ${where}`);
      pruned += plan.files.length - planned.size;
      const ids: string[] = [];
      for await (const batch of lw.scan({ filter: where, columns: ["id"] })) for (const v of batch.getChild("id")!) ids.push(String(v));
      if (JSON.stringify(ids.sort()) !== JSON.stringify([...expected.ids].sort())) wrongRows.push(`filter ${i}: ${where} (${ids.length} rows, Iceberg ${expected.ids.length})`);
      if (expected.ids.length > 0) matching++;
    }
    const result = {
      table: name,
      live_files: plan.files.length,
      live_rows: javaRows.length,
      written: table.files,
      predicates,
      matching,
      pruned_files: pruned,
      wrong_plans: wrongPlans.length,
      wrong_rows: wrongRows.length,
    };
    counts.push(result);
    console.log(JSON.stringify(result));
    expect(wrongPlans).toEqual([]);
    expect(wrongRows).toEqual([]);
    expect(matching).toBeGreaterThan(predicates / 4);
  });
});
