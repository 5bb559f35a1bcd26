/**
 * The `lakewarden` executable on copies of the Iceberg fixtures, through the format registry
 * (no --format: detected): `versions --json`, `head write` + `head show --json`, and
 * `cleanup --dry-run` then `cleanup`, each checked against the metadata text and icebird.
 */
import { copyFile, readFile, utimes } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expireSnapshots } from "./standalone-runners.ts";
import { openStore } from "../../../lib/store/index.ts";
import { runLakewarden } from "../../cli/run-executable.ts";
import {
  BROKEN_FIXTURES,
  CATALOG_POINTERS,
  copyIcebergFixture,
  fileExists,
  ICEBERG_FIXTURES,
  icebirdLiveFiles,
  icebirdMetadataFiles,
  listFiles,
  rewriteMetadata,
  snapshotsByTextPass,
  type FixtureCopy,
  type IcebergFixture,
} from "../../support/iceberg-fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});
async function copy(name: IcebergFixture): Promise<FixtureCopy> {
  const c = await copyIcebergFixture(name);
  copies.push(c);
  return c;
}

const CURRENT_METADATA: Record<IcebergFixture, string> = {
  "spark-bunnies": "v5.metadata.json",
  "athena-example": "00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json",
  "spark-rename_column": "v3.metadata.json",
  hive_partitioned_table: "v4.metadata.json",
  legacy_v1: "v2.metadata.json",
  "equality_deletes-mytable": "v7.metadata.json",
  big_query_error: "v1749025517.metadata.json",
};

/** The catalog's word for a fixture whose metadata files a catalog names (Athena's): readers without it refuse. */
function pointerArgs(name: IcebergFixture): string[] {
  const pointer = CATALOG_POINTERS[name];
  return pointer === undefined ? [] : ["--metadata-location", pointer];
}

describe("lakewarden versions --json", () => {
  for (const name of ICEBERG_FIXTURES.filter((n) => !BROKEN_FIXTURES.includes(n))) {
    it(`${name}: every snapshot, ids exactly as the metadata writes them, parents and timestamps`, async () => {
      const c = await copy(name);
      const run = await runLakewarden(["versions", c.dir, "--json", ...pointerArgs(name)]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      // Ids are JSON strings in the output: read them without any number conversion.
      const listed = JSON.parse(run.stdout) as { version_id: string; parent_ids: string[]; timestamp_millis: number; operation_type: string }[];
      const expected = await snapshotsByTextPass(join(c.dir, "metadata", CURRENT_METADATA[name]));
      expect(listed.map((r) => r.version_id).sort()).toEqual(expected.map((s) => s.id).sort());
      for (const s of expected) {
        const r = listed.find((l) => l.version_id === s.id)!;
        expect([r.parent_ids, r.timestamp_millis, r.operation_type]).toEqual([s.parent === null ? [] : [s.parent], s.timestampMs, s.operation]);
      }
    });
  }

  it("lists the history of the broken fixtures from their metadata alone (cleanup refuses them: below)", async () => {
    for (const name of BROKEN_FIXTURES) {
      const c = await copy(name);
      const listed = await runLakewarden(["versions", c.dir, "--json"]);
      expect(listed.code, `${name}: ${listed.stderr}`).toBe(0);
      const ids = (JSON.parse(listed.stdout) as { version_id: string }[]).map((r) => r.version_id);
      expect(ids.length, name).toBeGreaterThan(0);
      expect(
        ids.every((id) => /^-?\d+$/.test(id)),
        name,
      ).toBe(true);
    }
  });
});

describe("lakewarden head write / head show", () => {
  for (const name of ["spark-bunnies", "hive_partitioned_table"] as const) {
    it(`${name}: the head's live files are icebird's data files of the current snapshot`, async () => {
      const c = await copy(name);
      const write = await runLakewarden(["head", "write", c.dir, "--json"]);
      expect(write.code, write.stderr).toBe(0);
      expect((JSON.parse(write.stdout) as { action: string }).action).toBe("created");
      const show = await runLakewarden(["head", "show", c.dir, "--json"]);
      expect(show.code, show.stderr).toBe(0);
      const head = JSON.parse(show.stdout) as { source: string; files: { paths: string[]; physical_rows: number }[]; summary: { version_id: string } };
      expect(head.source).toBe("head");
      const theirs = (await icebirdLiveFiles(c.dir, CURRENT_METADATA[name])).filter((f) => f.content === 0);
      expect(head.files.map((f) => f.paths[0]).sort()).toEqual(theirs.map((f) => f.key));
      expect(head.files.map((f) => f.physical_rows).reduce((a, b) => a + b, 0)).toBe(Number(theirs.reduce((a, f) => a + f.recordCount, 0n)));
      const snapshots = await snapshotsByTextPass(join(c.dir, "metadata", CURRENT_METADATA[name]));
      expect(head.summary.version_id).toBe(snapshots.at(-1)!.id);
    });
  }
});

describe("lakewarden cleanup", () => {
  it("expires old snapshots by a metadata commit, deletes exactly what only they and the old strays held, and the table still reads", async () => {
    const c = await copy("spark-bunnies");
    const old = new Date(Date.now() - 10 * 24 * 3600 * 1000);
    const live = "data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet";
    const strays = ["data/00000-9-stray-00001.parquet", "metadata/5e0c3f43-0000-4000-8000-000000000000-m0.avro", "metadata/8d6f0e4e-0000-4000-8000-000000000000.metadata.json"];
    await copyFile(join(c.dir, live), join(c.dir, strays[0]!));
    await copyFile(join(c.dir, "metadata/91d5eea0-314d-4056-8818-59b825cbd38a-m1.avro"), join(c.dir, strays[1]!));
    await copyFile(join(c.dir, "metadata/v5.metadata.json"), join(c.dir, strays[2]!));
    for (const key of strays) await utimes(join(c.dir, key), old, old);
    // Hidden files (Hadoop checksums) are never candidates, however old.
    await copyFile(join(c.dir, live), join(c.dir, "data/.00000-9-stray-00001.parquet.crc"));
    await utimes(join(c.dir, "data/.00000-9-stray-00001.parquet.crc"), old, old);
    await copyFile(join(c.dir, live), join(c.dir, "data/young-00001.parquet"));
    const before = await listFiles(c.dir);

    // The expectation, read by icebird: the default policy (older than 7 days, keep the newest 1)
    // removes every snapshot but the current one; what only they reach goes with them.
    const snapshots = await snapshotsByTextPass(join(c.dir, "metadata/v5.metadata.json"));
    const reach = async (i: number) => [...(await icebirdMetadataFiles(c.dir, "v5.metadata.json", i)), ...(await icebirdLiveFiles(c.dir, "v5.metadata.json", i)).map((f) => f.key)];
    const keptReach = new Set(await reach(snapshots.length - 1));
    const expiredOnly = new Set<string>();
    for (let i = 0; i < snapshots.length - 1; i++) for (const key of await reach(i)) if (!keptReach.has(key)) expiredOnly.add(key);
    expect(expiredOnly.size).toBeGreaterThan(0);
    const expectedDeletes = [...strays, ...expiredOnly].sort();
    const liveBefore = await icebirdLiveFiles(c.dir, "v5.metadata.json");

    const dry = await runLakewarden(["cleanup", c.dir, "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as { format: string; versions: { version: number; keep: boolean }[]; files: { key: string; action: string }[] };
    expect(plan.format).toBe("iceberg");
    expect(plan.versions.filter((v) => !v.keep).map((v) => v.version)).toEqual([1, 2]);
    expect(
      plan.files
        .filter((f) => f.action === "delete")
        .map((f) => f.key)
        .sort(),
    ).toEqual(expectedDeletes);
    expect(plan.files.filter((f) => f.action === "keep").map((f) => f.key)).toEqual(["data/young-00001.parquet"]);
    expect(await listFiles(c.dir)).toEqual(before);

    const real = await runLakewarden(["cleanup", c.dir, "--json"]);
    expect(real.code, real.stderr).toBe(0);
    // The expiry commit is the only new file of the table (besides lakewarden's own), and the hint moved to it.
    const after = (await listFiles(c.dir)).filter((k) => !k.startsWith("_lakewarden/"));
    expect(after).toEqual([...before.filter((k) => !expectedDeletes.includes(k)), "metadata/v6.metadata.json"].sort());
    expect(await readFile(join(c.dir, "metadata/version-hint.text"), "utf8")).toBe("6");
    const remaining = await snapshotsByTextPass(join(c.dir, "metadata/v6.metadata.json"));
    expect(remaining.map((s) => s.id)).toEqual([snapshots.at(-1)!.id]);
    expect(await icebirdLiveFiles(c.dir, "v6.metadata.json")).toEqual(liveBefore);
    for (const key of await icebirdMetadataFiles(c.dir, "v6.metadata.json", 0)) expect(await fileExists(c.dir, key), key).toBe(true);
    for (const f of liveBefore) expect(await fileExists(c.dir, f.key), f.key).toBe(true);

    // History survives: the expired snapshots are still listed, cleaned up.
    const versions = await runLakewarden(["versions", c.dir, "--json"]);
    expect(versions.code, versions.stderr).toBe(0);
    const listed = JSON.parse(versions.stdout) as { version_id: string; is_cleaned_up: boolean }[];
    expect(listed.map((r) => [r.version_id, r.is_cleaned_up])).toEqual(snapshots.map((s, i) => [s.id, i < snapshots.length - 1]));
  });

  it("keeps tagged snapshots, and refuses a table with gc.enabled=false before deleting anything", async () => {
    const tagged = await copy("spark-bunnies");
    const first = (await snapshotsByTextPass(join(tagged.dir, "metadata/v5.metadata.json")))[0]!;
    await rewriteMetadata(tagged.dir, (json) => {
      json.refs = { ...(json.refs as object), "keep-first": { "snapshot-id": BigInt(first.id), type: "tag" } } as never;
    });
    const run = await runLakewarden(["cleanup", tagged.dir, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const v7 = await snapshotsByTextPass(join(tagged.dir, "metadata/v7.metadata.json"));
    expect(v7.map((s) => s.id)).toContain(first.id);
    expect(v7).toHaveLength(2);
    for (let i = 0; i < v7.length; i++) {
      for (const key of await icebirdMetadataFiles(tagged.dir, "v7.metadata.json", i)) expect(await fileExists(tagged.dir, key), key).toBe(true);
      for (const f of await icebirdLiveFiles(tagged.dir, "v7.metadata.json", i)) expect(await fileExists(tagged.dir, f.key), f.key).toBe(true);
    }

    const noGc = await copy("spark-bunnies");
    await rewriteMetadata(noGc.dir, (json) => {
      json.properties = { ...(json.properties as object), "gc.enabled": "false" } as never;
    });
    await copyFile(join(noGc.dir, "metadata/v5.metadata.json"), join(noGc.dir, "metadata/8d6f0e4e-0000-4000-8000-000000000000.metadata.json"));
    const before = await listFiles(noGc.dir);
    const refused = await runLakewarden(["cleanup", noGc.dir, "--safety-window", "0s", "--allow-short-safety-window"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/gc\.enabled is false/);
    expect((await listFiles(noGc.dir)).filter((k) => !k.startsWith("_lakewarden/"))).toEqual(before);
  });

  it("drops a ref past its max-ref-age-ms by a commit of its own when no snapshot expires; the dry run says it would", async () => {
    const c = await copy("spark-bunnies");
    const current = (await snapshotsByTextPass(join(c.dir, "metadata/v5.metadata.json"))).at(-1)!;
    await rewriteMetadata(c.dir, (json) => {
      json.refs = { ...(json.refs as object), stale: { "snapshot-id": BigInt(current.id), type: "tag", "max-ref-age-ms": 1 } } as never;
      json.properties = { ...(json.properties as object), "history.expire.min-snapshots-to-keep": "10" } as never;
    });
    const dry = await runLakewarden(["cleanup", c.dir, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    // The policy line says what decided: the table's snapshot retention, not lakewarden's 7 days.
    expect(dry.stdout).toMatch(
      /^policy: older-than 5d \(the table's snapshot retention: max-snapshot-age-ms from Iceberg's default, [^)]*\), retain-versions 10 \(the table's snapshot retention: min-snapshots-to-keep from table property history\.expire\.min-snapshots-to-keep, /m,
    );
    expect(dry.stdout).toMatch(/^metadata commit on metadata\/v6\.metadata\.json: would write: ref "stale" expired \(.*\): the expiry commit drops it$/m);
    expect(await fileExists(c.dir, "metadata/v7.metadata.json")).toBe(false);
    const real = await runLakewarden(["cleanup", c.dir]);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/^metadata commit on metadata\/v6\.metadata\.json: metadata\/v7\.metadata\.json: ref "stale" expired/m);
    expect(real.stdout).toMatch(/^versions removed: .*\(0\)/m);
    expect(await readFile(join(c.dir, "metadata/version-hint.text"), "utf8")).toBe("7");
    const text = await readFile(join(c.dir, "metadata/v7.metadata.json"), "utf8");
    expect(text).not.toMatch(/"stale"/);
    expect((await snapshotsByTextPass(join(c.dir, "metadata/v7.metadata.json"))).map((s) => s.id)).toEqual(
      (await snapshotsByTextPass(join(c.dir, "metadata/v6.metadata.json"))).map((s) => s.id),
    );
  });

  it("refuses the broken fixtures before deleting anything", async () => {
    for (const name of BROKEN_FIXTURES) {
      const c = await copy(name);
      const before = await listFiles(c.dir);
      const run = await runLakewarden(["cleanup", c.dir, "--older-than", "0s", "--allow-short-retention", "--safety-window", "0s", "--allow-short-safety-window"]);
      expect(run.code, name).toBe(1);
      expect(run.stderr.trim().split("\n"), name).toHaveLength(1);
      expect(run.stderr, name).toMatch(/does not exist|cannot be resolved|not under the table/);
      expect(
        (await listFiles(c.dir)).filter((k) => !k.startsWith("_lakewarden/")),
        name,
      ).toEqual(before);
    }
  });
});

describe("history survives expiry", () => {
  it("snapshots archived by `checkpoint` before an expiry commit are still listed by `versions`, cleaned up", async () => {
    const c = await copy("spark-bunnies");
    const before = await snapshotsByTextPass(join(c.dir, "metadata", CURRENT_METADATA["spark-bunnies"]));
    const checkpoint = await runLakewarden(["checkpoint", c.dir]);
    expect(checkpoint.code, checkpoint.stderr).toBe(0);
    const report = await expireSnapshots(openStore(c.dir));
    expect(report.committedKey).toBe("metadata/v6.metadata.json");
    const remaining = await snapshotsByTextPass(join(c.dir, report.committedKey!));
    expect(remaining.map((s) => s.id)).toEqual([before.at(-1)!.id]);

    const run = await runLakewarden(["versions", c.dir, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as { version_id: string; is_cleaned_up: boolean }[];
    expect(listed.map((r) => r.version_id)).toEqual(before.map((s) => s.id));
    for (const r of listed) expect(r.is_cleaned_up, r.version_id).toBe(!remaining.some((s) => s.id === r.version_id));
  });
});
