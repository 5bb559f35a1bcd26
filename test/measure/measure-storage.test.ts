/**
 * `lakewarden storage` on a real LanceDB table with tags, a branch (LanceDB's own), a reader
 * pin, stray files and checkpoints: the parts add up to the bytes a walk of the directory finds;
 * reclaimable equals, to the byte, what `cleanup --dry-run` then plans and what `cleanup` then
 * removes from disk; each receipt records the storage before and after.
 */
import { readFile, stat, utimes, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { createPin } from "../../lib/pins/pins.ts";
import { runCleanup } from "../../lib/maintenance/run-cleanup.ts";
import { writeTableHead } from "../../lib/head/write-table-head.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { partsTotal } from "../../lib/measure/measure-storage.ts";
import type { StorageReport } from "../../lib/measure/measure-storage.ts";
import { buildLanceDataset, makeTempDir, removeDir, STANDARD_HISTORY } from "../support/lance-datasets.ts";
import { listTree } from "../maintenance/lance-checks.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Every file under the table with its size, walked on disk (not through lakewarden). */
async function walk(root: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const path of await listTree(root)) sizes.set(path, (await stat(join(root, path))).size);
  return sizes;
}

const sum = (sizes: Iterable<number>) => [...sizes].reduce((a, b) => a + b, 0);

async function richTable() {
  const dbUri = await makeTempDir("lw-storage-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({ dbUri, steps: [...STANDARD_HISTORY, { op: "append", rows: 5 }, { op: "append", rows: 5 }] });
  // A branch made by LanceDB from main version 4, with a commit of its own (files under tree/exp/).
  const branch = await (await ds.table.branches()).create("exp", "main", 4);
  await branch.add([{ id: 1000, name: "on-branch", score: 1 }]);
  branch.close();
  ds.close();
  const root = ds.tableUri;
  const store = new LocalStore(root);
  // Checkpoints and a receipt: a cleanup that removes nothing (default 7 days), then a head.
  await runCleanup(store);
  await writeTableHead(store);
  // A reader pin on an old, untagged version no branch was made from.
  const pinned = ds.written.find((w) => w.version === 6)!.version;
  const pin = await createPin(store, { version: pinned, ttlMs: 3_600_000, note: "reader" });
  // Stray files: old unreferenced data (reclaimable), young unreferenced data (safety window),
  // a file in _versions/ Lance does not know (unknown), one outside the format's folders (other).
  const old = new Date(Date.now() - 30 * 86_400_000);
  await writeFile(join(root, "data", "stray-old.lance"), "x".repeat(1234));
  await utimes(join(root, "data", "stray-old.lance"), old, old);
  await writeFile(join(root, "data", "stray-young.lance"), "y".repeat(321));
  await writeFile(join(root, "_versions", "leftover.tmp"), "z".repeat(77));
  await mkdir(join(root, "notes"), { recursive: true });
  await writeFile(join(root, "notes", "README.txt"), "w".repeat(55));
  return { root, ds, pin, pinned };
}

describe("lakewarden storage", () => {
  it("parts add up to the listed bytes; reclaimable equals what cleanup --dry-run plans and cleanup then removes, to the byte", async () => {
    const { root, ds, pinned } = await richTable();
    const onDisk = await walk(root);

    const shown = await cli("storage", root, "--json", "--older-than", "0s", "--by-version");
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    const report = JSON.parse(shown.stdout) as StorageReport;
    // The listing is the directory, and the parts add up to it.
    expect(report.listed).toEqual({ files: onDisk.size, bytes: sum(onDisk.values()) });
    expect(partsTotal(report.parts)).toEqual(report.listed);
    const reasons = report.parts.history.by_reason;
    expect(report.parts.history.bytes).toBe(sum(Object.values(reasons).map((t) => t.bytes)));
    expect(reasons.tags.files).toBeGreaterThan(0);
    expect(reasons.branches.files).toBeGreaterThan(0);
    expect(reasons.pins.files).toBeGreaterThan(0);
    expect(reasons.retention.files).toBe(0); // older-than 0s, retain 1: only refs and pins keep history
    expect(report.parts.unknown).toEqual({ files: 1, bytes: 77 });
    const other = report.parts.other.by_reason;
    expect(other.within_safety_window).toEqual({ files: 1, bytes: 321 });
    const outside = [...onDisk].filter(([key]) => !/^(_versions|data|_deletions|_transactions|_indices|_lakewarden)\//.test(key));
    expect(outside.map(([key]) => key)).toContain("notes/README.txt");
    expect(outside.some(([key]) => key.startsWith("tree/exp/"))).toBe(true);
    expect(other.outside_format_folders).toEqual({ files: outside.length, bytes: sum(outside.map(([, size]) => size)) });
    const ours = [...onDisk].filter(([key]) => key.startsWith("_lakewarden/"));
    expect(ours.some(([key]) => key.startsWith("_lakewarden/checkpoints/"))).toBe(true);
    expect(report.parts.lakewarden).toEqual({ files: ours.length, bytes: sum(ours.map(([, size]) => size)) });
    expect(report.parts.reclaimable.files).toBeGreaterThan(1);
    // --by-version: the pinned version is listed, with what it alone holds.
    const pinnedLine = report.by_version!.find((v) => v.version === pinned)!;
    expect(pinnedLine.kept_by).toBe("pin");
    expect(pinnedLine.alone.bytes).toBeGreaterThan(0);
    for (const v of report.by_version!) expect(v.alone.bytes).toBeLessThanOrEqual(v.referenced.bytes);

    // The same numbers as a dry run of cleanup with the same retention.
    const dry = JSON.parse((await cli("cleanup", root, "--dry-run", "--json", "--older-than", "0s", "--allow-short-retention")).stdout) as {
      bytes_removed: number;
      files: { action: string }[];
      versions_removed: number[];
    };
    expect(dry.bytes_removed).toBe(report.parts.reclaimable.bytes);
    expect(dry.files.filter((f) => f.action === "delete").length).toBe(report.parts.reclaimable.files);
    expect(dry.versions_removed).toEqual(report.versions_reclaimable);

    // cleanup removes exactly that from disk (our own folder aside, which the run writes to).
    const run = await cli("cleanup", root, "--json", "--older-than", "0s", "--allow-short-retention");
    expect(run.code).toBe(0);
    const after = await walk(root);
    const gone = [...onDisk.keys()].filter((key) => !after.has(key) && !key.startsWith("_lakewarden/"));
    expect(gone.length).toBe(report.parts.reclaimable.files);
    expect(sum(gone.map((key) => onDisk.get(key)!))).toBe(report.parts.reclaimable.bytes);
    expect(gone).toContain("data/stray-old.lance");

    // The receipt records the storage before and after.
    const cleaned = JSON.parse(run.stdout) as { receipt: string; storage: { before: StorageReport["parts"]; after: StorageReport["parts"] } };
    expect(cleaned.storage.before.reclaimable).toEqual(report.parts.reclaimable);
    expect(cleaned.storage.after.reclaimable).toEqual({ files: 0, bytes: 0 });
    expect(cleaned.storage.after.history).toEqual(cleaned.storage.before.history);
    const receipt = JSON.parse(await readFile(join(root, cleaned.receipt), "utf8")) as { storage: unknown };
    expect(receipt.storage).toEqual(cleaned.storage);

    // Nothing left to reclaim, and the parts still add up.
    const again = JSON.parse((await cli("storage", root, "--json", "--older-than", "0s")).stdout) as StorageReport;
    expect(again.parts.reclaimable).toEqual({ files: 0, bytes: 0 });
    const onDiskAfter = await walk(root);
    expect(again.listed).toEqual({ files: onDiskAfter.size, bytes: sum(onDiskAfter.values()) });
    expect(partsTotal(again.parts)).toEqual(again.listed);
    expect(ds.written.length).toBeGreaterThan(5);
  });

  it("text output: parts in human units, the policy and the history reasons; default retention keeps history as retention", async () => {
    const { root } = await richTable();
    const text = await cli("storage", root);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^live +\d+(\.\d)? (B|KiB|MiB) +\d+ files?/m);
    expect(text.stdout).toMatch(/^ {2}retention +/m);
    expect(text.stdout).toMatch(/^total listed +/m);
    expect(text.stdout).toContain("older than 7d (default)");
    const json = JSON.parse((await cli("storage", root, "--json")).stdout) as StorageReport;
    expect(json.parts.history.by_reason.retention.files).toBeGreaterThan(0);
    // Only the old stray file is reclaimable under the default 7 days.
    expect(json.parts.reclaimable).toEqual({ files: 1, bytes: 1234 });
    expect((await cli("storage", root, "--older-than", "soon")).code).toBe(2);

    // History protection: below version 4 only some versions are due (version 1 is tagged), so
    // all of them are kept, and their files count as kept by protection; still the dry run's bytes.
    expect((await cli("config", "set", root, "protect_before=4")).code).toBe(0);
    const guarded = JSON.parse((await cli("storage", root, "--json", "--older-than", "0s")).stdout) as StorageReport;
    expect(guarded.parts.history.by_reason.protection.files).toBeGreaterThan(0);
    expect(partsTotal(guarded.parts)).toEqual(guarded.listed);
    const dry = JSON.parse((await cli("cleanup", root, "--dry-run", "--json", "--older-than", "0s", "--allow-short-retention")).stdout) as {
      bytes_removed: number;
      protection: { result: string };
    };
    expect(dry.protection.result).toBe("kept-all");
    expect(dry.bytes_removed).toBe(guarded.parts.reclaimable.bytes);
  });
});
