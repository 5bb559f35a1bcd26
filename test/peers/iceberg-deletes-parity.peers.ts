/**
 * Iceberg parity on merge-on-read tables that Iceberg Java 1.10.0 writes at test time
 * (IcebergDeletesTable.java): global and partition-scoped equality deletes (by id, on a string
 * with null, on a date, on two columns, one of them added after the older files), position
 * deletes naming many data files and file-scoped ones, a compaction that retires some of them and
 * one that keeps its starting data sequence number, a tag, a branch with its own deletes, an orphan;
 * small (40 data files) and with thousands of files. Each table is copied twice with its file
 * times: iceberg-core's ExpireSnapshots with the table's own retention (main keeps its last 3
 * snapshots; the tag and the branch keep theirs) and the orphan removal of IcebergPeer.java clean
 * one copy, lakewarden's cleanup (no setting: the table's retention decides) the other. The
 * expired snapshots and the deleted files must be the same, file for file; then Iceberg Java
 * reads every snapshot each copy kept, deletes applied (IcebergDeletesRead.java), and each must
 * hold the same rows as in the untouched table. Results in .tools/peers-results/iceberg-deletes-parity.json.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { listFiles, snapshotsByTextPass } from "../support/iceberg-fixtures.ts";
import { currentMetadataName } from "../support/iceberg-histories.ts";
import { type DeletesTable, icebergWriterClassPath, readWithIcebergJava, runJava, type SnapshotsRead, writeDeletesTable } from "./iceberg-deletes-java.ts";
import { RESULTS_DIR } from "./peer-scripts.ts";

const SIZES = [
  { name: "small", dataFiles: 40, rowsPerFile: 10, seed: 11 },
  { name: "2,000 data files", dataFiles: 2000, rowsPerFile: 10, seed: 12 },
] as const;

interface PeerResult {
  id: string;
  error?: string;
  expired?: string[];
  expire_deleted?: string[];
  orphans?: string[];
}

let scratch = "";
const tables: DeletesTable[] = [];
const rows: Record<string, unknown>[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "lw-iceberg-deletes-parity-"));
  icebergWriterClassPath((line) => console.error(line));
});

afterAll(async () => {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, "iceberg-deletes-parity.json"), `${JSON.stringify(rows, null, 2)}\n`);
  await Promise.all(tables.map((t) => t.remove()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function copyOf(table: DeletesTable, name: string): Promise<string> {
  const dir = join(scratch, `${name}-${tables.length}`);
  await cp(table.dir, dir, { recursive: true, preserveTimestamps: true });
  return dir;
}

async function snapshotIds(dir: string): Promise<string[]> {
  return (await snapshotsByTextPass(join(dir, "metadata", await currentMetadataName(dir)))).map((s) => s.id).sort();
}

describe("Iceberg parity on tables with equality and position deletes written by Iceberg Java: ExpireSnapshots + orphans against lakewarden's cleanup", () => {
  it.each(SIZES)("$name: the same snapshots expired and files deleted; every kept snapshot reads the same rows in Iceberg Java", async (size) => {
    const table = await writeDeletesTable(size, 30);
    tables.push(table);
    expect(table.files.equality_deletes).toBeGreaterThan(4);
    expect(table.files.position_deletes).toBeGreaterThan(1);
    const metadata = await currentMetadataName(table.dir);
    const snapshotsBefore = await snapshotIds(table.dir);
    expect(snapshotsBefore.length).toBe(table.snapshots.length);
    const keys = await listFiles(table.dir);

    const ours = await copyOf(table, "lakewarden");
    const theirs = await copyOf(table, "iceberg-core");
    const io = new BufferIO();
    const started = Date.now();
    const exit = await runCli(["cleanup", ours, "--json"], io);
    const oursSeconds = (Date.now() - started) / 1000;
    expect(exit, io.stderr).toBe(0);

    const jobs = join(scratch, `peer-${size.seed}.json`);
    await writeFile(jobs, JSON.stringify([{ id: "0", dir: theirs, metadata, orphanOlderThanMs: Date.now() - 3 * 86_400_000 }]));
    const peerStarted = Date.now();
    const [peer] = JSON.parse(await runJava("IcebergPeer", [jobs], 900_000)) as PeerResult[];
    const peerSeconds = (Date.now() - peerStarted) / 1000;
    expect(peer!.error).toBeUndefined();

    const oursAfter = new Set(await listFiles(ours));
    const oursDeleted = keys.filter((k) => !oursAfter.has(k)).sort();
    const theirsDeleted = [...(peer!.expire_deleted ?? []), ...(peer!.orphans ?? [])].sort();
    const oursKept = await snapshotIds(ours);
    const oursExpired = snapshotsBefore.filter((id) => !oursKept.includes(id));
    const row = {
      table: size.name,
      files: keys.length,
      written: table.files,
      lakewarden: { expired: oursExpired.length, deleted: oursDeleted.length, seconds: oursSeconds },
      iceberg_core: { expired: (peer!.expired ?? []).length, deleted: theirsDeleted.length, seconds_with_jvm: peerSeconds },
      only_lakewarden: oursDeleted.filter((k) => !theirsDeleted.includes(k)),
      only_iceberg_core: theirsDeleted.filter((k) => !oursDeleted.includes(k)),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
    expect(oursExpired).toEqual(peer!.expired);
    expect(oursDeleted).toEqual(theirsDeleted);
    // Not a vacuous agreement: snapshots expired, and the files only they reached went, with the orphan.
    expect(oursExpired.length).toBeGreaterThan(3);
    expect(oursDeleted).toEqual(expect.arrayContaining([...table.compacted, table.orphan]));

    // Iceberg Java reads every snapshot each copy kept, deletes applied: the same rows as the untouched table.
    const [before, ...after] = await readWithIcebergJava<SnapshotsRead>(
      [
        { id: "untouched", dir: table.dir, metadata, mode: "snapshots", only: oursKept },
        { id: "lakewarden", dir: ours, metadata: await currentMetadataName(ours), mode: "snapshots" },
        { id: "iceberg-core", dir: theirs, metadata: await currentMetadataName(theirs), mode: "snapshots" },
      ],
      scratch,
    );
    expect(before!.error).toBeUndefined();
    for (const copy of after) {
      expect(copy.error, copy.id).toBeUndefined();
      const kept = Object.keys(copy.snapshots!);
      expect(kept.sort(), copy.id).toEqual(oursKept);
      for (const id of kept) expect(copy.snapshots![id], `${copy.id}: snapshot ${id}`).toEqual(before!.snapshots![id]);
    }
    for (const ref of Object.values(table.refs)) expect(oursKept).toContain(ref);
  });
});
