/**
 * The planner on a table Spark wrote with bucket[4] and identity partitions, whose identity
 * source column was renamed since (spark-rename_column): for every row, filters on its id (bucket
 * pruning: Iceberg's Murmur3 must agree with Spark's) and on its date (identity on the renamed
 * column) keep the file that holds it, read by hyparquet; and files of other buckets and dates
 * are dropped. Through the library's public entry point.
 */
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { afterAll, describe, expect, it } from "vitest";
import { openTable } from "../../lib/index.ts";
import { copyIcebergFixture, type FixtureCopy } from "../support/iceberg-fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});

async function rowsOf(dir: string, key: string): Promise<Record<string, unknown>[]> {
  const bytes = await readFile(join(dir, key));
  return parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors });
}

const day = (value: unknown): string | null => (value instanceof Date ? value.toISOString().slice(0, 10) : value === null || value === undefined ? null : String(value));

describe("bucket and identity partitions written by Spark", () => {
  it("every row's file is kept for its id and its date; other files are pruned", async () => {
    const c = await copyIcebergFixture("spark-rename_column");
    copies.push(c);
    const table = await openTable(c.dir);
    const all = (await table.plan()).files.map((f) => f.paths[0]!);
    expect(all).toHaveLength(3);
    let pruned = 0;
    for (const key of all) {
      for (const row of await rowsOf(c.dir, key)) {
        const byId = (await table.plan({ filter: `id = ${Number(row.id)}` })).files.map((f) => f.paths[0]);
        expect(byId, `id = ${row.id}`).toContain(key);
        pruned += all.length - byId.length;
        // The files were written before the rename: their column is still called `date` (same field id).
        const date = day(row.event_date ?? row.date);
        const where = date === null ? "event_date IS NULL" : `event_date = DATE '${date}'`;
        const byDate = (await table.plan({ filter: where })).files.map((f) => f.paths[0]);
        expect(byDate, where).toContain(key);
        expect(byDate.length, where).toBeLessThan(all.length);
      }
    }
    expect(pruned).toBeGreaterThan(0);
    // A bucket holds many ids: an IN over ids of one file keeps that file and drops no file holding one.
    const plan = await table.plan({ filter: "id IN (-1, 1000000) OR event_date < DATE '1900-01-01'" });
    expect(plan.files.length).toBeLessThan(all.length);
  });
});
