/**
 * Valid Iceberg tables that cleanup refused (safe, but wrong), built by editing copies of the
 * fixtures: a location written `./name` or with a `/./` segment; a format-1 manifest whose EXISTING
 * entries carry the v2 sequence-number fields as null (the spec gives 0); a current metadata file
 * whose name carries no number (`vfinal.metadata.json`), named by --metadata-location or by the
 * version hint's stem. Each is now read and cleaned, and every file the current snapshot reads (by
 * icebird, read before the edit) is still there after; and the "not a metadata file name" message
 * is printed only for names that are not `metadata/*.metadata.json`.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import type { JsonValue } from "../../../lib/formats/iceberg/lossless-json.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { copyIcebergFixture, fileExists, icebirdLiveFiles, icebirdMetadataFiles, listFiles, type IcebergFixture } from "../../support/iceberg-fixtures.ts";
import { editMetadataJson, metadataJsonKeys, rewriteAvro } from "../../support/iceberg-surgery.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

async function copy(name: IcebergFixture): Promise<string> {
  const c = await copyIcebergFixture(name, { ageMs: 400 * DAY_MS });
  onTestFinished(c.remove);
  return c.dir;
}

/** What icebird says the current snapshot of `metadataFile` reads: manifest list, manifests, content files. */
async function currentReads(dir: string, metadataFile: string): Promise<string[]> {
  const json = JSON.parse(await readFile(join(dir, "metadata", metadataFile), "utf8")) as { snapshots: { "snapshot-id": number }[]; "current-snapshot-id": number };
  const index = json.snapshots.length - 1;
  const live = (await icebirdLiveFiles(dir, metadataFile)).map((f) => f.key);
  expect(live.length).toBeGreaterThan(0);
  return [...new Set([...(await icebirdMetadataFiles(dir, metadataFile, index)), ...live])].sort();
}

async function expectAllPresent(dir: string, keys: readonly string[]): Promise<void> {
  for (const key of keys) expect(await fileExists(dir, key), key).toBe(true);
}

/** Dry run, then a real run: both exit 0; every file the current snapshot reads is still there. */
async function cleansSafely(dir: string, needed: readonly string[], ...argv: string[]): Promise<void> {
  const dry = await cli("cleanup", dir, ...argv, "--dry-run", "--json");
  expect(dry.code, dry.stderr).toBe(0);
  const real = await cli("cleanup", dir, ...argv, "--json");
  expect(real.code, real.stderr).toBe(0);
  await expectAllPresent(dir, needed);
}

describe("a location with '.' segments", () => {
  // legacy_v1 writes a relative location and paths under it (hive_partitioned_table does too, but
  // its data files do not have the sizes its manifests record, which the proof before deletes refuses).
  for (const [what, location] of [
    ["./name", "./data/persistent/iceberg_v1_deprecated/default/legacy_v1"],
    ["a /./ segment", "data/persistent/iceberg_v1_deprecated/./default/legacy_v1"],
  ] as const) {
    it(`a relative location written ${what} holds the paths written under it`, async () => {
      const dir = await copy("legacy_v1");
      const needed = await currentReads(dir, "v2.metadata.json");
      for (const key of await metadataJsonKeys(dir)) await editMetadataJson(dir, key, (json) => void (json.location = location));
      await cleansSafely(dir, needed);
    });
  }

  it("an absolute location with a /./ segment holds the paths written without it", async () => {
    const dir = await copy("spark-bunnies");
    const needed = await currentReads(dir, "v5.metadata.json");
    for (const key of await metadataJsonKeys(dir)) await editMetadataJson(dir, key, (json) => void (json.location = "s3a://hyperparam-iceberg/./spark/bunnies"));
    await cleansSafely(dir, needed);
  });
});

describe("a format-1 manifest with null sequence numbers", () => {
  it("EXISTING entries whose sequence_number is null read as sequence 0, as the spec gives for v1", async () => {
    const dir = await copy("legacy_v1");
    const needed = await currentReads(dir, "v2.metadata.json");
    const manifest = "metadata/d65f86b0-b799-467f-b1f4-9c697e4c4fc7-m0.avro";
    await rewriteAvro(dir, manifest, {
      editSchema: (schema) => {
        schema.fields.splice(
          2,
          0,
          { name: "sequence_number", type: ["null", "long"], default: null, "field-id": 3 },
          { name: "file_sequence_number", type: ["null", "long"], default: null, "field-id": 4 },
        );
      },
      editRecord: (record) => {
        record.status = 0;
        record.sequence_number = null;
        record.file_sequence_number = null;
      },
    });
    // (icebird 0.3.1 itself refuses such entries: "missing sequence number"; `needed` was read before the edit.)
    await cleansSafely(dir, needed);
  });
});

describe("a metadata file name with no number", () => {
  /** spark-bunnies with its latest commit written as `metadata/vfinal.metadata.json` on top of v5, adding a tag. */
  async function finalTable(hint: string | null, onTopOfV5 = true): Promise<{ dir: string; needed: string[] }> {
    const dir = await copy("spark-bunnies");
    const needed = await currentReads(dir, "v5.metadata.json");
    const text = await readFile(join(dir, "metadata/v5.metadata.json"), "utf8");
    await writeFile(join(dir, "metadata/vfinal.metadata.json"), text);
    await editMetadataJson(dir, "metadata/vfinal.metadata.json", (json) => {
      const location = String(json.location);
      if (onTopOfV5)
        json["metadata-log"] = [...(json["metadata-log"] as JsonValue[]), { "timestamp-ms": json["last-updated-ms"]!, "metadata-file": `${location}/metadata/v5.metadata.json` }];
      json.refs = { ...(json.refs as Record<string, JsonValue>), final: { "snapshot-id": json["current-snapshot-id"]!, type: "tag" } };
    });
    if (hint !== null) await writeFile(join(dir, "metadata/version-hint.text"), hint);
    return { dir, needed };
  }

  it("--metadata-location naming it reads and cleans the table", async () => {
    const { dir, needed } = await finalTable(null);
    const versions = await cli("versions", dir, "--metadata-location", "metadata/vfinal.metadata.json", "--json");
    expect(versions.code, versions.stderr).toBe(0);
    expect((JSON.parse(versions.stdout) as { is_tagged: boolean }[]).at(-1)!.is_tagged).toBe(true);
    await cleansSafely(dir, needed, "--metadata-location", "metadata/vfinal.metadata.json");
  });

  for (const hint of ["final", "vfinal"]) {
    it(`the version hint's stem (${JSON.stringify(hint)}) names the current metadata file; cleanup expires nothing and leaves the hint`, async () => {
      const { dir, needed } = await finalTable(hint);
      const versions = await cli("versions", dir, "--json");
      expect(versions.code, versions.stderr).toBe(0);
      // The tag exists only in vfinal: the table was read there, not at v5.
      expect((JSON.parse(versions.stdout) as { is_tagged: boolean }[]).at(-1)!.is_tagged).toBe(true);
      const metadataBefore = (await listFiles(dir)).filter((k) => k.endsWith(".metadata.json"));
      await cleansSafely(dir, needed);
      // No commit named in a scheme the writer does not use, and the writer's pointer as it was.
      expect((await listFiles(dir)).filter((k) => k.endsWith(".metadata.json"))).toEqual(metadataBefore);
      expect(await readFile(join(dir, "metadata/version-hint.text"), "utf8")).toBe(hint);
    });
  }

  it("a hint naming a file not written on top of the highest v<N> is refused: which is current is unclear", async () => {
    const { dir } = await finalTable("final", false);
    const before = await listFiles(dir);
    const run = await cli("cleanup", dir, "--dry-run");
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/version hint names metadata\/vfinal\.metadata\.json.*metadata\/v5\.metadata\.json/);
    expect(await listFiles(dir)).toEqual(before);
  });

  it("'not an Iceberg table metadata file name' is said only of names that are not metadata/*.metadata.json", async () => {
    const dir = await copy("spark-bunnies");
    for (const key of ["metadata/v5.json", "metadata/old/v5.metadata.json", "data/v5.metadata.json"]) {
      const run = await cli("versions", dir, "--metadata-location", key);
      expect(run.code, key).not.toBe(0);
      expect(run.stderr, key).toMatch(/not an Iceberg table metadata file name \(metadata\/\*\.metadata\.json\)/);
    }
    const missing = await cli("versions", dir, "--metadata-location", "metadata/missing.metadata.json");
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).not.toMatch(/not an Iceberg table metadata file name/);
  });
});
