/**
 * A cleanup reads the newest Delta checkpoint once (lib/formats/delta/checkpoint-bytes.ts): the
 * snapshot it replays from, log cleanup's proof that it decodes and the proof stage's proveFile
 * share one GET per run. It was read three times before, four with the sidecar names log cleanup
 * reads from the checkpoints it keeps. A checkpoint damaged before the run is proven from its own
 * bytes, as before (log cleanup falls back to the previous checkpoint).
 */
import { truncate } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import type { ByteRange, GetResult } from "../../../lib/store/object-store.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { setAllTimes } from "./log-surgery.ts";

const NEWEST = "_delta_log/00000000000000000040.checkpoint.parquet";
const DAY = 86_400_000;

/** A local store that remembers the key of every GET and the bytes each answered. */
class GetRecordingStore extends LocalStore {
  readonly gets: { key: string; bytes: number }[] = [];
  override async get(key: string, range?: ByteRange): Promise<GetResult> {
    const result = await super.get(key, range);
    this.gets.push({ key, bytes: result.body.byteLength });
    return result;
  }
}

async function agedTable(): Promise<string> {
  const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
  await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
  return dir;
}

describe("the newest Delta checkpoint in a cleanup run", () => {
  it("is read with one GET, though the snapshot, log cleanup's proof and the proof stage all need it whole", async () => {
    const store = new GetRecordingStore(await agedTable());
    const report = await runCleanup(store, { format: deltaFormat });
    expect(report.status).toBe("completed");
    // The run did read it for the proof (it deletes): log files below checkpoint 40 went.
    expect(report.proof?.files_read).toBeGreaterThan(0);
    expect(report.versions_removed.length).toBeGreaterThan(0);
    expect(store.gets.filter((get) => get.key === NEWEST)).toHaveLength(1);
  });

  it("a dry run reads it once too", async () => {
    const store = new GetRecordingStore(await agedTable());
    const report = await runCleanup(store, { format: deltaFormat, dryRun: true });
    expect(report.status).toBe("dry-run");
    expect(store.gets.filter((get) => get.key === NEWEST)).toHaveLength(1);
  });

  it("a newest checkpoint truncated before the run is proven from its own bytes: log cleanup keeps checkpoint 30 instead", async () => {
    const dir = await agedTable();
    await truncate(join(dir, NEWEST), 2000);
    const report = await runCleanup(new LocalStore(dir), { format: deltaFormat });
    const deleted = report.files.filter((file) => file.action === "delete").map((file) => file.key);
    expect(deleted).toContain("_delta_log/00000000000000000029.json");
    for (const kept of ["_delta_log/00000000000000000030.checkpoint.parquet", "_delta_log/00000000000000000030.json", NEWEST]) expect(deleted).not.toContain(kept);
  });
});
