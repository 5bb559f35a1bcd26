/**
 * DuckDB as a second, independent oracle of plans and rows (the first is the writers' own readers,
 * rows-oracle and plan-oracle): tables written by delta-rs and pyiceberg (test/scan/scan_tables.py:
 * every column type, nulls, NaN, -0.0, a delete, a column added, partitioned and not, Iceberg
 * partition evolution), read by DuckDB's delta and iceberg extensions (test/scan/duckdb_oracle.py),
 * randomized filters evaluated by DuckDB's SQL. For every filter lakewarden's scan from the head
 * must return exactly DuckDB's rows, and (Delta, where DuckDB names each row's file) the plan must
 * hold every file DuckDB found a matching row in. 1,040 filters take about 50 s (30 s even with 50
 * filters a table: writing the tables is most of it), too slow for `npm test`: `npm run test:duckdb`.
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
import { toolPython } from "../tools/python-env.ts";
import { catalogPointerFormat } from "../support/iceberg-fixtures.ts";
import { randomFilter, random } from "./random-filters.ts";
import type { Samples } from "./random-filters.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const PREDICATES_PER_TABLE = 260;

let root = "";
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function python(script: string, args: string[]): string {
  return execFileSync(toolPython(), [join(HERE, script), ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
}

/** A value as scan_tables.py's canonical writes it: ints, decimals and timestamps as text, NaN as "NaN". */
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

const TABLES = [
  { format: "delta", layout: "plain" },
  { format: "delta", layout: "parts" },
  { format: "iceberg", layout: "plain" },
  { format: "iceberg", layout: "parts" },
] as const;

describe("plans and rows against DuckDB", { timeout: 180_000 }, () => {
  for (const [n, { format, layout }] of TABLES.entries()) {
    it(`${format} ${layout}: every live row, and ${PREDICATES_PER_TABLE} random filters' rows and files`, async () => {
      root ||= await mkdtemp(join(tmpdir(), "lw-rows-duckdb-"));
      const dir = join(root, `${format}-${layout}`);
      const seed = 3000 + n;
      const written = JSON.parse(python("scan_tables.py", ["write", format, dir, "--layout", layout, "--seed", String(seed)])) as { uri: string; samples: Samples };
      const tableDir = format === "iceberg" ? dirname(dirname(fileURLToPath(written.uri))) : dir;
      // pyiceberg's SQL catalog names the current metadata file: the table is read at that pointer.
      const atPointer = format === "iceberg" ? { format: catalogPointerFormat(tableDir, written.uri) } : {};
      await writeTableHead(openStore(tableDir), atPointer);

      const rand = random(seed);
      const filters = Array.from({ length: PREDICATES_PER_TABLE }, () => randomFilter(written.samples, rand));
      const predicatesFile = join(root, `${format}-${layout}.json`);
      await writeFile(predicatesFile, JSON.stringify(filters));
      const duck = JSON.parse(python("duckdb_oracle.py", [format, format === "iceberg" ? fileURLToPath(written.uri) : dir, predicatesFile])) as {
        rows: Record<string, unknown>[];
        results: (number | string)[][];
        files: string[][];
      };

      const table = await openTable(tableDir, atPointer);
      const state = await table.latest();
      expect(state.source).toBe("head");
      const source = { ...state, store: table.store };

      const mine: Record<string, unknown>[] = [];
      for await (const batch of scanValues(source)) {
        for (let i = 0; i < batch.rows; i++) mine.push(Object.fromEntries(batch.columns.map((c) => [c.name, canonical(c, batch.values.get(c.name)![i]!)])));
      }
      const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.id) - Number(b.id);
      expect(mine.sort(byId)).toEqual([...duck.rows].sort(byId));

      let matching = 0;
      let pruned = 0;
      for (const [i, filter] of filters.entries()) {
        const where = formatFilter(filter);
        const ids: string[] = [];
        for await (const batch of scanValues(source, { filter: where, columns: ["id"] })) for (const v of batch.values.get("id")!) ids.push(String(v));
        expect(ids.sort(), `seed ${seed}, filter ${i}: ${where}`).toEqual(duck.results[i]!.map(String).sort());
        if (ids.length > 0) matching++;
        const plan = await table.plan({ filter: where });
        pruned += plan.totalFiles - plan.files.length;
        if (format === "delta") {
          const planned = new Set(plan.files.flatMap((f) => f.paths.map((p) => decodeURIComponent(p))));
          expect(
            duck.files[i]!.filter((key) => !planned.has(decodeURIComponent(key))),
            `seed ${seed}, filter ${i}: ${where}`,
          ).toEqual([]);
        }
      }
      // Neither side is vacuous: filters match rows, and the planner prunes files.
      expect(matching).toBeGreaterThan(PREDICATES_PER_TABLE / 4);
      expect(pruned).toBeGreaterThan(0);
      console.log(`${format} ${layout}: ${duck.rows.length} live rows, ${PREDICATES_PER_TABLE} filters (${matching} matching rows, ${pruned} file plans pruned), equal to DuckDB`);
    });
  }
});
