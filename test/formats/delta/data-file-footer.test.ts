/**
 * Parquet footers of Delta data files: the bytes returned decode to the file's metadata, whose
 * row count equals what DuckDB counts in the same file; a file that is not Parquet is refused.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { parquetMetadata } from "hyparquet";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { CorruptFileError } from "../../../lib/formats/errors.ts";
import { readParquetFooter } from "../../../lib/formats/delta/data-file-footer.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { copyFixture } from "../../support/fixtures.ts";

async function duckCount(file: string): Promise<number> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${file.replaceAll("'", "''")}')`);
    return Number(reader.getRowObjectsJson()[0]!.n);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe("Delta data file footers", () => {
  it.each(["table_with_deletion_logs", "checkpoint-cdf-table", "table_with_liquid_clustering"])("%s: footers decode to the row count DuckDB reads", async (name) => {
    const dir = await copyFixture("delta", name);
    const store = new LocalStore(dir);
    const snapshot = await loadSnapshot(store);
    for (const add of snapshot.adds.slice(0, 4)) {
      const path = decodeURIComponent(add.path);
      const footer = await readParquetFooter(store, path);
      expect(footer.offset + footer.bytes.length).toBe(footer.fileSize);
      expect(footer.fileSize).toBe(add.size);
      const metadata = parquetMetadata(footer.bytes.buffer.slice(footer.bytes.byteOffset, footer.bytes.byteOffset + footer.bytes.byteLength) as ArrayBuffer);
      expect(Number(metadata.num_rows)).toBe(await duckCount(join(dir, path)));
    }
  });

  it("refuses a file that is not Parquet, in one line naming it", async () => {
    const dir = await copyFixture("delta", "simple_commit");
    await writeFile(join(dir, "not.parquet"), "hello, this is not parquet at all");
    const error = await readParquetFooter(new LocalStore(dir), "not.parquet").catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(CorruptFileError);
    expect((error as Error).message).toMatch(/not\.parquet: not a Parquet file/);
  });
});
