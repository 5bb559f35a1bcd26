/**
 * `lakewarden scan`: JSON lines of the matching rows (64-bit ints and decimals as strings), on a
 * Spark table with a deletion vector and a partitioned Iceberg table with its partition columns
 * outside the data files; clear usage errors for a bad filter, column or limit; Lance refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { openTable } from "../../lib/index.ts";
import { jsonValue } from "../../lib/scan/json-rows.ts";
import { openStore } from "../../lib/store/index.ts";
import { runLakewarden } from "../cli/run-executable.ts";
import { copyFixtureDir } from "../support/fixtures.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

const removals: (() => Promise<void>)[] = [];
let delta = "";
let iceberg = "";
beforeAll(async () => {
  for (const [format, name] of [
    ["delta", "table-with-dv-small"],
    ["iceberg", "spark-rename_column"],
  ] as const) {
    const { dir, remove } = await copyFixtureDir(format, name);
    removals.push(remove);
    await writeTableHead(openStore(dir));
    if (format === "delta") delta = dir;
    else iceberg = dir;
  }
});
afterAll(async () => {
  await Promise.all(removals.map((r) => r()));
});

const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("lakewarden scan", () => {
  it("prints the matching rows of a Delta table, its deletion vector applied, as JSON lines", async () => {
    const all = await runLakewarden(["scan", delta]);
    expect(all.code, all.stderr).toBe(0);
    // Spark deleted rows 0 and 9 of values 0..9 through the deletion vector.
    expect(lines(all.stdout).map((r) => r.value)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const some = await runLakewarden(["scan", delta, "--where", "value >= 7 OR value = 0", "--limit", "1"]);
    expect(lines(some.stdout)).toEqual([{ value: 7 }]);
  });

  it("gives decimals and 64-bit ints as strings, and only the columns asked for", async () => {
    const run = await runLakewarden(["scan", iceberg, "--columns", "id,price", "--where", "price IS NOT NULL"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = lines(run.stdout);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(["id", "price"]);
      expect(row.price).toMatch(/^-?\d+\.\d{2}$/);
    }
    // A long past 2^53 and a decimal keep every digit; a 32-bit int stays a number.
    expect(jsonValue({ name: "n", type: "int", formatType: "long" }, 2n ** 60n + 1n)).toBe("1152921504606846977");
    expect(jsonValue({ name: "d", type: "decimal", scale: 2, formatType: "decimal(20, 2)" }, -5n)).toBe("-0.05");
    expect(jsonValue({ name: "i", type: "int", formatType: "int" }, 7n)).toBe(7);
    expect(jsonValue({ name: "t", type: "timestamptz", formatType: "timestamptz" }, -1n)).toBe("1969-12-31T23:59:59.999999Z");
    const table = await openTable(iceberg);
    let count = 0;
    for await (const batch of table.scan({ filter: "price IS NOT NULL", columns: ["id", "price"] })) count += batch.numRows;
    expect(count).toBe(rows.length);
  });

  it("says what is wrong with a bad filter, column or limit, and exits 2", async () => {
    for (const [args, message] of [
      [["--where", "id <"], /^lakewarden: --where: expected a literal at position 5, found the end/],
      [["--where", "nope = 1"], /^lakewarden: --where: unknown column "nope" at position 1/],
      [["--columns", "id,,x"], /^lakewarden: --columns: expected column names separated by commas/],
      [["--columns", "nope"], /unknown column "nope" in the column list/],
      [["--limit", "-1"], /^lakewarden: --limit: expected a whole number >= 0, got "-1"/],
    ] as const) {
      const run = await runLakewarden(["scan", iceberg, ...args]);
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });
});

describe("lakewarden scan on a Lance table", () => {
  let dir = "";
  let dataset: LanceDataset;
  beforeAll(async () => {
    dir = await makeTempDir("lw-scan-lance-rows-");
    dataset = await buildLanceDataset({ dbUri: dir, steps: [{ op: "create", rows: 5 }] });
  });
  afterAll(async () => {
    dataset?.close();
    if (dir) await removeDir(dir);
  });

  it("is refused in one line: the format cannot read rows", async () => {
    const run = await runLakewarden(["scan", dataset.tableUri]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/reading rows of lance tables is not supported/);
  });
});
