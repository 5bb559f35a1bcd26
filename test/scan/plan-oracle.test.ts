/**
 * The planner against the writers' own readers: Delta and Iceberg tables written at test time by
 * delta-rs and pyiceberg (test/scan/scan_tables.py: every column type, nulls, NaN, a delete, a
 * column added, partitioned and not, Iceberg partition evolution with identity, bucket, truncate,
 * day and year), then randomized filters over every column. For each filter the oracle reads every
 * live data file with the writer's reader (pyiceberg's ArrowScan per task, deltalake's add actions
 * with pyarrow) and evaluates the filter row by row in Python; the plan from the head must hold
 * every file that has a matching row, and equal the plan made from the manifest.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openTable } from "../../lib/head/loader.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { openStore } from "../../lib/store/index.ts";
import { formatFilter } from "../../lib/scan/expression.ts";
import { planFiles } from "../../lib/scan/plan.ts";
import { toolPython } from "../tools/python-env.ts";
import { catalogPointerFormat } from "../support/iceberg-fixtures.ts";
import { random, randomFilter } from "./random-filters.ts";
import type { Samples } from "./random-filters.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "scan_tables.py");
const PREDICATES_PER_TABLE = 260;

let root = "";
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function python(args: string[]): string {
  return execFileSync(toolPython(), [SCRIPT, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
}

const TABLES = [
  { format: "delta", layout: "plain" },
  { format: "delta", layout: "parts" },
  { format: "iceberg", layout: "plain" },
  { format: "iceberg", layout: "parts" },
] as const;

describe("plans against a full scan by the writer's reader", { timeout: 180_000 }, () => {
  for (const [n, { format, layout }] of TABLES.entries()) {
    it(`${format} ${layout}: ${PREDICATES_PER_TABLE} random filters, no file with a matching row left out`, async () => {
      root ||= await mkdtemp(join(tmpdir(), "lw-scan-oracle-"));
      const dir = join(root, `${format}-${layout}`);
      const seed = 1000 + n;
      const written = JSON.parse(python(["write", format, dir, "--layout", layout, "--seed", String(seed)])) as { uri: string; samples: Samples };
      // pyiceberg's SQL catalog puts the table under the warehouse; the metadata file names it.
      const tableDir = format === "iceberg" ? dirname(dirname(fileURLToPath(written.uri))) : dir;

      const store = openStore(tableDir);
      // The catalog names the current metadata file: the table is read at that pointer.
      const atPointer = format === "iceberg" ? { format: catalogPointerFormat(tableDir, written.uri) } : {};
      await writeTableHead(store, atPointer);
      const table = await openTable(tableDir, atPointer);
      const state = await table.latest();
      expect(state.source).toBe("head");
      const fromManifest = { ...state, snapshot: await state.format.readSnapshot(store, state.snapshot.versionFile) };

      const rand = random(seed);
      const filters = Array.from({ length: PREDICATES_PER_TABLE }, () => randomFilter(written.samples, rand));
      const predicatesFile = join(root, `${format}-${layout}.json`);
      await writeFile(predicatesFile, JSON.stringify(filters));
      const oracle = JSON.parse(python(["match", format, format === "iceberg" ? written.uri : dir, predicatesFile])) as {
        live_files: string[];
        results: { files: string[]; rows: number }[];
      };

      // The plan without a filter is every live file the writer's reader sees.
      const all = await table.plan();
      expect(all.files.flatMap((f) => f.paths).sort()).toEqual([...oracle.live_files].sort());

      let pruned = 0;
      let matchingFilters = 0;
      for (const [i, filter] of filters.entries()) {
        const where = formatFilter(filter);
        const plan = await table.plan({ filter: where });
        const planned = new Set(plan.files.flatMap((f) => f.paths));
        const missed = oracle.results[i]!.files.filter((key) => !planned.has(key));
        expect(missed, `seed ${seed}, filter ${i}: ${where}`).toEqual([]);
        expect(
          planFiles(fromManifest, { filter: where }).files.map((f) => f.paths[0]),
          where,
        ).toEqual(plan.files.map((f) => f.paths[0]));
        pruned += plan.totalFiles - plan.files.length;
        if (oracle.results[i]!.rows > 0) matchingFilters++;
      }
      // The oracle is not vacuous (filters match rows) and neither is the planner (it prunes).
      expect(matchingFilters).toBeGreaterThan(PREDICATES_PER_TABLE / 4);
      expect(pruned).toBeGreaterThan(0);
      console.log(
        `${format} ${layout}: ${oracle.live_files.length} files, ${PREDICATES_PER_TABLE} filters (${matchingFilters} matching rows), ${pruned} file plans pruned of ${PREDICATES_PER_TABLE * oracle.live_files.length}`,
      );
    });
  }
});
