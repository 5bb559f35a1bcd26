/**
 * Rows against a full scan by the writer's own reader (deltalake's to_pyarrow_table, pyiceberg's
 * scan().to_arrow()), on the planner oracle's tables (test/scan/scan_tables.py: every column
 * type, nulls, NaN, a delete, a column added, partitioned and not): every live row equal value
 * for value, and for each randomized filter exactly the rows the Python evaluation matches.
 * One Python call per table writes it and one reads it; the filters are the planner oracle's.
 * A request-counting store shows that a scan on a head with inline footers reads no footer.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { ScanColumn, ScanValue } from "../../lib/formats/scan-files.ts";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { formatFilter } from "../../lib/scan/expression.ts";
import { scanValues } from "../../lib/scan/rows.ts";
import { openStore } from "../../lib/store/index.ts";
import type { ByteRange, ObjectStore } from "../../lib/store/object-store.ts";
import { toolPython } from "../tools/python-env.ts";
import { catalogPointerFormat } from "../support/iceberg-fixtures.ts";
import { randomFilter, random } from "./random-filters.ts";
import type { Samples } from "./random-filters.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "scan_tables.py");
const PREDICATES_PER_TABLE = 260;

let root = "";
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function python(args: string[]): string {
  return execFileSync(toolPython(), [SCRIPT, ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
}

/** A value as the Python side writes it (scan_tables.py canonical). */
function canonical(column: ScanColumn, v: ScanValue | null): unknown {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number" && column.type === "float") return Number.isNaN(v) ? "NaN" : v;
  if (column.type === "date") return new Date(Number(v) * 86_400_000).toISOString().slice(0, 10);
  if (column.type === "decimal" && typeof v === "bigint") {
    const scale = column.scale ?? 0;
    const digits = (v < 0n ? -v : v).toString().padStart(scale + 1, "0");
    return `${v < 0n ? "-" : ""}${digits.slice(0, digits.length - scale)}${scale > 0 ? `.${digits.slice(digits.length - scale)}` : ""}`;
  }
  return String(v);
}

/** The store, with every ranged read recorded. */
function recording(store: ObjectStore, reads: { key: string; range: ByteRange | undefined }[]): ObjectStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === "get") {
        return (key: string, range?: ByteRange) => {
          reads.push({ key, range });
          return target.get(key, range);
        };
      }
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const TABLES = [
  { format: "delta", layout: "plain" },
  { format: "delta", layout: "parts" },
  { format: "iceberg", layout: "plain" },
  { format: "iceberg", layout: "parts" },
] as const;

describe("rows against a full scan by the writer's reader", { timeout: 180_000 }, () => {
  for (const [n, { format, layout }] of TABLES.entries()) {
    it(`${format} ${layout}: every live row, and ${PREDICATES_PER_TABLE} random filters' rows`, async () => {
      root ||= await mkdtemp(join(tmpdir(), "lw-rows-oracle-"));
      const dir = join(root, `${format}-${layout}`);
      const seed = 2000 + n;
      const written = JSON.parse(python(["write", format, dir, "--layout", layout, "--seed", String(seed)])) as { uri: string; samples: Samples };
      const tableDir = format === "iceberg" ? dirname(dirname(fileURLToPath(written.uri))) : dir;
      // pyiceberg's SQL catalog names the current metadata file: the table is read at that pointer.
      const atPointer = format === "iceberg" ? { format: catalogPointerFormat(tableDir, written.uri) } : {};
      await writeTableHead(openStore(tableDir), atPointer);

      const rand = random(seed);
      const filters = Array.from({ length: PREDICATES_PER_TABLE }, () => randomFilter(written.samples, rand));
      const predicatesFile = join(root, `${format}-${layout}.json`);
      await writeFile(predicatesFile, JSON.stringify(filters));
      const oracle = JSON.parse(python(["rows", format, format === "iceberg" ? written.uri : dir, predicatesFile])) as {
        rows: Record<string, unknown>[];
        results: string[][];
      };

      const reads: { key: string; range: ByteRange | undefined }[] = [];
      const table = await openTable(recording(openStore(tableDir), reads), atPointer);
      const state = await table.latest();
      expect(state.source).toBe("head");
      const source = { ...state, store: table.store };

      // The full scan: the same rows, value for value.
      const mine: Record<string, unknown>[] = [];
      reads.length = 0;
      for await (const batch of scanValues(source)) {
        for (let i = 0; i < batch.rows; i++) mine.push(Object.fromEntries(batch.columns.map((c) => [c.name, canonical(c, batch.values.get(c.name)![i]!)])));
      }
      const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.id) - Number(b.id);
      expect(mine.sort(byId)).toEqual([...oracle.rows].sort(byId));
      // Inline footers: no read of a data file touches its footer.
      const footers = new Map(state.footers.map((f) => [f.path, f]));
      expect(footers.size).toBeGreaterThan(0);
      for (const { key, range } of reads) {
        const footer = footers.get(key);
        if (footer) expect(range && "offset" in range && range.offset + range.length <= footer.offset, `${key} ${JSON.stringify(range)}`).toBe(true);
      }

      // And the Arrow batches hold the same number of rows.
      let arrowRows = 0;
      for await (const batch of table.scan()) arrowRows += batch.numRows;
      expect(arrowRows).toBe(oracle.rows.length);

      let matching = 0;
      for (const [i, filter] of filters.entries()) {
        const where = formatFilter(filter);
        const ids: string[] = [];
        for await (const batch of scanValues(source, { filter: where, columns: ["id"] })) for (const v of batch.values.get("id")!) ids.push(String(v));
        expect(ids.sort(), `seed ${seed}, filter ${i}: ${where}`).toEqual(oracle.results[i]!.map(String).sort());
        if (ids.length > 0) matching++;
      }
      expect(matching).toBeGreaterThan(PREDICATES_PER_TABLE / 4);
      console.log(`${format} ${layout}: ${oracle.rows.length} live rows, ${PREDICATES_PER_TABLE} filters (${matching} matching rows), rows equal`);
    });
  }
});
