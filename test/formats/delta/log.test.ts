/**
 * The log's building blocks: file names, the `_last_checkpoint` checksum (the spec's test vector
 * and real Spark-written files), deletion-vector file names (the spec's example and the DV files
 * that really exist in fixture tables), percent-decoded paths.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { parseLogFileName } from "../../../lib/formats/delta/log-names.ts";
import { canonicalJson, jsonChecksum } from "../../../lib/formats/delta/json-checksum.ts";
import { parseLastCheckpoint } from "../../../lib/formats/delta/last-checkpoint.ts";
import { deletionVectorLocation } from "../../../lib/formats/delta/deletion-vectors.ts";
import { decodeDeltaPath } from "../../../lib/formats/delta/paths.ts";
import { loadSnapshot } from "../../../lib/formats/delta/snapshot.ts";
import { listLog } from "../../../lib/formats/delta/log-listing.ts";
import { copyFixture, fixtureNames } from "../../support/fixtures.ts";

describe("log file names", () => {
  it.each([
    ["00000000000000000007.json", { kind: "commit", version: 7 }],
    ["00000000000000000007.crc", { kind: "crc", version: 7 }],
    ["00000000000000000010.checkpoint.parquet", { kind: "checkpoint", version: 10, shape: "classic" }],
    ["00000000000000000001.checkpoint.0000000002.0000000002.parquet", { kind: "checkpoint", version: 1, shape: "multipart", part: 2, parts: 2 }],
    [
      "00000000000000000008.checkpoint.e5ac4dc4-be27-4106-8a55-609707487f83.json",
      { kind: "checkpoint", version: 8, shape: "uuid", uuid: "e5ac4dc4-be27-4106-8a55-609707487f83", extension: "json" },
    ],
    ["00000000000000000004.00000000000000000006.compacted.json", { kind: "compaction", version: 4, endVersion: 6 }],
  ])("%s", (name, expected) => {
    expect(parseLogFileName(name)).toEqual(expected);
  });

  it.each([
    ".00000000000000000000.json.crc",
    "_last_checkpoint",
    "7.json",
    "00000000000000000006.00000000000000000004.compacted.json",
    "00000000000000000001.checkpoint.0000000003.0000000002.parquet",
  ])("%s is not a log file", (name) => {
    expect(parseLogFileName(name)).toBeNull();
  });
});

describe("_last_checkpoint checksum", () => {
  it("matches the spec's test vector", () => {
    const json = JSON.parse(`{"k0":"'v 0'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}`);
    expect(canonicalJson(json)).toBe(
      `"k0"="%27v%200%27","k1"+"k2"=2,"k1"+"k3"+0="v3","k1"+"k3"+1+0=1,"k1"+"k3"+1+1=2,"k1"+"k3"+2+"k4"="v4","k1"+"k3"+2+"k5"+0="v5","k1"+"k3"+2+"k5"+1="v6","k1"+"k3"+2+"k5"+2="v7"`,
    );
    expect(jsonChecksum(json)).toBe("6a92d155a59bf2eecbd4b4ec7fd1f875");
  });

  it("verifies every fixture file that carries a checksum, and rejects it once a byte of content changes", async () => {
    let verified = 0;
    for (const name of await fixtureNames("delta")) {
      const dir = await copyFixture("delta", name);
      const path = join(dir, "_delta_log", "_last_checkpoint");
      if (!existsSync(path)) continue;
      const bytes = await readFile(path);
      const read = parseLastCheckpoint(bytes);
      expect(read.kind, name).toBe("valid");
      if (read.kind !== "valid" || !read.hint.checksumVerified) continue;
      verified++;
      const tampered = JSON.parse(bytes.toString("utf8"));
      tampered.size += 1;
      expect(parseLastCheckpoint(Buffer.from(JSON.stringify(tampered))).kind).toBe("invalid");
    }
    expect(verified).toBeGreaterThanOrEqual(5);
  });

  it("reads old delta-rs files (snake case, no checksum) and refuses non-JSON", () => {
    expect(parseLastCheckpoint(Buffer.from(`{"size":6,"size_in_bytes":23521,"version":1}`))).toEqual({ kind: "valid", hint: { version: 1, size: 6, checksumVerified: false } });
    expect(parseLastCheckpoint(Buffer.from(`{"version":1`)).kind).toBe("invalid");
    expect(parseLastCheckpoint(Buffer.from(`{"size":3}`)).kind).toBe("invalid");
  });
});

describe("deletion vector files", () => {
  it("decodes the spec's example (random prefix + Z85 UUID)", () => {
    expect(deletionVectorLocation({ storageType: "u", pathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^", sizeInBytes: 1, cardinality: 1 })).toEqual({
      kind: "relative",
      path: "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin",
    });
    expect(deletionVectorLocation({ storageType: "i", pathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", sizeInBytes: 40, cardinality: 6 })).toEqual({
      kind: "inline",
    });
    expect(deletionVectorLocation({ storageType: "p", pathOrInlineDv: "s3://bucket/t/dv.bin", sizeInBytes: 1, cardinality: 1 })).toEqual({
      kind: "absolute",
      uri: "s3://bucket/t/dv.bin",
    });
    expect(deletionVectorLocation({ storageType: "u", pathOrInlineDv: "short", sizeInBytes: 1, cardinality: 1 }).kind).toBe("invalid");
  });

  it.each(["table-with-dv-small", "table_with_deletion_logs", "basic-dv-with-checkpoint"])("%s: every live DV resolves to a file that exists", async (name) => {
    const dir = await copyFixture("delta", name);
    const snapshot = await loadSnapshot(new LocalStore(dir));
    const dvs = snapshot.adds.filter((a) => a.deletionVector);
    expect(dvs.length).toBeGreaterThan(0);
    for (const add of dvs) {
      const location = deletionVectorLocation(add.deletionVector!);
      expect(location.kind).toBe("relative");
      if (location.kind === "relative") expect(existsSync(join(dir, location.path)), location.path).toBe(true);
    }
  });
});

describe("paths and listing", () => {
  it("decodes relative paths and keeps absolute URIs as written", () => {
    expect(decodeDeltaPath("a%20b=1/part-0.parquet")).toEqual({ kind: "relative", path: "a b=1/part-0.parquet" });
    expect(decodeDeltaPath("s3://bucket/t/part-0.parquet")).toEqual({ kind: "absolute", uri: "s3://bucket/t/part-0.parquet" });
    expect(decodeDeltaPath("bad%zz").kind).toBe("invalid");
  });

  it("lists a multi-part checkpoint as one complete checkpoint, and a V2 table's UUID checkpoints", async () => {
    const multi = await listLog(new LocalStore(await copyFixture("delta", "multi-part-checkpoint")));
    expect(multi.checkpoints.map((c) => [c.version, c.shape, c.files.length, c.complete])).toEqual([[1, "multipart", 2, true]]);
    const v2 = await listLog(new LocalStore(await copyFixture("delta", "checkpoint-v2-table")));
    expect(v2.checkpoints.map((c) => [c.version, c.shape])).toEqual([
      [6, "uuid"],
      [8, "uuid"],
    ]);
    expect([...v2.crcs.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("reads a V2 checkpoint's sidecar", async () => {
    const dir = await copyFixture("delta", "checkpoint-v2-table");
    const snapshot = await loadSnapshot(new LocalStore(dir));
    expect(snapshot.checkpoint?.sidecars).toEqual(["_delta_log/_sidecars/00000000000000000008.checkpoint.0000000001.0000000001.d55fb2cb-b8d3-4362-8572-c52142a9da1f.parquet"]);
  });

  it("starts at the hinted checkpoint: a table with a _last_checkpoint reads only the checkpoint and later commits", async () => {
    const dir = await copyFixture("delta", "basic-dv-with-checkpoint");
    const store = new LocalStore(dir);
    const snapshot = await loadSnapshot(store);
    expect(snapshot.checkpoint?.version).toBe(40);
    expect(snapshot.replayedCommits).toEqual([41, 42, 43, 44, 45, 46]);
    // _last_checkpoint + checkpoint + 6 commits; one listing.
    expect(store.stats.snapshot()).toMatchObject({ get: 8, list: 1 });
  });

  it("reading every version's snapshot parses each commit and checkpoint once (files keyed by ETag)", async () => {
    const dir = await copyFixture("delta", "table_with_deletion_logs");
    const store = new LocalStore(dir);
    for (let v = 0; v <= 20; v++) await loadSnapshot(store, v);
    const gets = store.stats.snapshot().get;
    // Per call: _last_checkpoint (21); once each: 21 commits, 2 checkpoints.
    expect(gets).toBe(21 + 21 + 2);
  });
});
