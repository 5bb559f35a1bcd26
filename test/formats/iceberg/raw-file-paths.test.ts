/**
 * Iceberg paths are raw text, not URIs to decode: Java's HadoopFileIO opens `file:/t/data/p=a%3Ab/f.parquet`
 * as the folder named `p=a%3Ab` (Iceberg URL-encodes partition values into folder names, so a value
 * "a:b" or "a/b" gives `%3A` or `%2F` in the name). Cleanup must keep such a live file, not read it as
 * `p=a:b` and delete the real one as an orphan.
 */
import { copyFile, mkdir, utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { appendSnapshot, copyIcebergFixture, fileExists } from "../../support/iceberg-fixtures.ts";

describe("Iceberg cleanup on file: paths with percent signs in folder names", () => {
  it.each(["data/p=a%3Ab/f-00001.parquet", "data/p=a%2Fb/f-00001.parquet", "data/p=50%25/f-00001.parquet"])("keeps the live file %s, and finds it before the run", async (key) => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    await mkdir(join(copy.dir, key, ".."), { recursive: true });
    await copyFile(join(copy.dir, "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet"), join(copy.dir, key));
    const old = new Date(Date.now() - 20 * DAY_MS);
    await utimes(join(copy.dir, key), old, old);
    // As Java writes it on a local file system: `file:` + the folder's path as it is, nothing decoded.
    const root = `file:${copy.dir}`;
    await appendSnapshot(copy.dir, { files: [{ path: `${root}/${key}`, recordCount: 20, sizeInBytes: 3560 }], timestampMs: Date.now() - 3_600_000 });

    const report = await runCleanup(new LocalStore(copy.dir), { format: icebergFormat, now: () => new Date() });
    expect(report.status).toBe("completed");
    expect(report.files.filter((f) => f.action === "delete").map((f) => f.key)).not.toContain(key);
    expect(await fileExists(copy.dir, key)).toBe(true);
    expect(report.reference_check?.missingBeforeRun).toEqual([]);
  });
});
