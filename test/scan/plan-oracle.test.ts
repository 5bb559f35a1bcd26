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
import type { CompareOp, Expr, Literal } from "../../lib/scan/expression.ts";
import { planFiles } from "../../lib/scan/plan.ts";
import { toolPython } from "../tools/python-env.ts";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "scan_tables.py");
const PREDICATES_PER_TABLE = 260;

let root = "";
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function python(args: string[]): string {
  return execFileSync(toolPython(), [SCRIPT, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
}

/** A small seeded PRNG (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Samples = Record<string, Literal[]>;

/** Literals near the samples: the sample itself, a neighbour, a prefix, NaN and NULL now and then. */
function literalFor(samples: Literal[], rand: () => number): Literal {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const nonNull = samples.filter((s) => s.type !== "null");
  const base = nonNull.length > 0 ? pick(nonNull) : { type: "null" as const };
  const r = rand();
  if (r < 0.04) return { type: "null" };
  if (base.type === "number") {
    if (r < 0.1) return { type: "number", text: "NaN" };
    if (base.text === "NaN" || r < 0.6) return base;
    const n = Number(base.text);
    const delta = pick([1, -1, 0.5, -0.5, 7, -7]);
    return { type: "number", text: Number.isInteger(n) && Math.abs(delta) >= 1 ? String(n + delta) : String(n + delta) };
  }
  if (base.type === "string") {
    if (r < 0.5) return base;
    const chars = [...base.value];
    return { type: "string", value: r < 0.75 ? chars.slice(0, Math.max(1, Math.floor(chars.length / 2))).join("") : `${base.value}z` };
  }
  if (base.type === "date" && r > 0.6) {
    const d = new Date(`${base.text}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + pick([1, -1, 30]));
    return { type: "date", text: d.toISOString().slice(0, 10) };
  }
  if (base.type === "timestamp" && r > 0.6) return { type: "timestamp", text: `${base.text.slice(0, 10)} 00:00:00` };
  return base;
}

function randomFilter(samples: Samples, rand: () => number, depth = 0): Expr {
  const columns = Object.keys(samples);
  const r = rand();
  if (depth < 2 && r < 0.35) {
    const left = randomFilter(samples, rand, depth + 1);
    const right = randomFilter(samples, rand, depth + 1);
    return { kind: rand() < 0.5 ? "and" : "or", left, right };
  }
  if (depth < 2 && r < 0.42) return { kind: "not", expr: randomFilter(samples, rand, depth + 1) };
  const column = columns[Math.floor(rand() * columns.length)]!;
  const kind = rand();
  if (kind < 0.1) return { kind: "null-check", column, negated: rand() < 0.5, position: 0 };
  if (kind < 0.25) {
    const values = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => literalFor(samples[column]!, rand));
    return { kind: "in", column, values, negated: rand() < 0.3, position: 0 };
  }
  const ops: CompareOp[] = ["=", "=", "!=", "<", "<=", ">", ">="];
  return { kind: "compare", column, op: ops[Math.floor(rand() * ops.length)]!, value: literalFor(samples[column]!, rand), position: 0 };
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
      await writeTableHead(store);
      const table = await openTable(tableDir);
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
