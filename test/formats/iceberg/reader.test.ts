/**
 * The decoding layer on the real fixture tables: metadata JSON with exact 64-bit ids, metadata
 * file names and the choice of the latest by sequence, gzip metadata, manifest lists and
 * manifests through avsc, checked against icebird's own Avro decoder (an independent reader).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { avroMetadata, avroRead } from "icebird";
import { afterAll, describe, expect, it } from "vitest";
import { CorruptFileError } from "../../../lib/formats/errors.ts";
import {
  integerText,
  NATIVE_LOSSLESS_JSON,
  parseJsonLossless,
  parseJsonLosslessPortable,
  stringifyJsonLossless,
  stringifyJsonLosslessPortable,
  type JsonValue,
} from "../../../lib/formats/iceberg/lossless-json.ts";
import { decodeManifest, decodeManifestList, ENTRY_STATUS } from "../../../lib/formats/iceberg/manifests.ts";
import { latestMetadataFile, listMetadataFiles, readMetadataFile } from "../../../lib/formats/iceberg/metadata-files.ts";
import { parseMetadataFileName, parseVersionHint } from "../../../lib/formats/iceberg/metadata-names.ts";
import { openStore } from "../../../lib/store/index.ts";
import { copyIcebergFixture, fixturePath, ICEBERG_FIXTURES, listFiles, type FixtureCopy } from "../../support/iceberg-fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});
async function copy(name: (typeof ICEBERG_FIXTURES)[number]): Promise<FixtureCopy> {
  const c = await copyIcebergFixture(name);
  copies.push(c);
  return c;
}

/** Every `"snapshot-id" : <digits>` in a metadata text, read by a regex, not by any JSON parser. */
function snapshotIdsInText(text: string): string[] {
  return [...text.matchAll(/"snapshot-id"\s*:\s*(-?\d+)/g)].map((m) => m[1]!);
}

describe("lossless JSON", () => {
  it("keeps integers beyond 2^53 exact, where JSON.parse rounds them", () => {
    const text = `{"snapshot-id": 9158179788527662767, "small": 42, "fraction": 1.5, "neg": -9158179788527662767}`;
    const value = parseJsonLossless(text) as Record<string, JsonValue>;
    expect(integerText(value["snapshot-id"])).toBe("9158179788527662767");
    expect(String((JSON.parse(text) as Record<string, number>)["snapshot-id"])).not.toBe("9158179788527662767");
    expect(value.small).toBe(42);
    expect(value.fraction).toBe(1.5);
    expect(integerText(value.neg)).toBe("-9158179788527662767");
    expect(stringifyJsonLossless(value)).toBe(`{"snapshot-id":9158179788527662767,"small":42,"fraction":1.5,"neg":-9158179788527662767}`);
  });

  it("reads every fixture's snapshot ids exactly as the text holds them", async () => {
    for (const name of ICEBERG_FIXTURES) {
      const store = openStore(fixturePath(name));
      const latest = await latestMetadataFile(store);
      expect(latest, name).not.toBeNull();
      const read = await readMetadataFile(store, latest!.key);
      const expected = snapshotIdsInText(read.text);
      const ours = read.metadata.snapshots.flatMap((s) => [s.id, ...(s.parentId === null ? [] : [s.parentId])]);
      // Every id we decoded appears verbatim in the text, and every id in the text (snapshots,
      // refs, snapshot log) is one of the table's snapshots.
      for (const id of ours) expect(expected, `${name} ${id}`).toContain(id);
      expect(new Set(expected), name).toEqual(new Set(read.metadata.snapshots.map((s) => s.id)));
      expect(read.metadata.snapshots.length, name).toBeGreaterThan(0);
      // The whole document round-trips: same ids after stringify and a second parse.
      const again = snapshotIdsInText(stringifyJsonLossless(read.metadata.json));
      expect(again.sort(), name).toEqual([...expected].sort());
    }
  });

  // Node 20 has neither the reviver's context.source nor JSON.rawJSON: there the library path runs
  // (test/package/pack-install.test.ts runs the installed package on Node 20). Here, on Node 22,
  // both paths run side by side and must agree value for value and byte for byte.
  it("Node 20's library path parses and writes every fixture's metadata exactly as Node 22's native path", async () => {
    expect(NATIVE_LOSSLESS_JSON).toBe(true);
    const metadataFiles: string[] = [];
    for (const name of ICEBERG_FIXTURES) {
      for (const key of await listFiles(fixturePath(name))) if (key.endsWith(".metadata.json")) metadataFiles.push(join(fixturePath(name), key));
    }
    expect(metadataFiles.length).toBeGreaterThan(ICEBERG_FIXTURES.length);
    for (const file of metadataFiles) {
      const text = await readFile(file, "utf8");
      const native = parseJsonLossless(text);
      const portable = parseJsonLosslessPortable(text);
      expect(portable, file).toStrictEqual(native);
      expect(stringifyJsonLosslessPortable(portable, 2), file).toBe(stringifyJsonLossless(native, 2));
      expect(stringifyJsonLosslessPortable(portable), file).toBe(stringifyJsonLossless(native));
    }
  });

  it("the library path gives JSON.parse's values for the corner cases too", () => {
    const text = `{"a": 1, "a": 9007199254740993, "__proto__": {"x": 1}, "e": 1e400, "f": 1.0, "g": -0, "h": 12e3, "s": "\\u00e9\u00e9", "l": [9007199254740991, -9007199254740992]}`;
    const portable = parseJsonLosslessPortable(text);
    expect(portable).toStrictEqual(parseJsonLossless(text));
    const value = portable as Record<string, JsonValue>;
    expect(value.a).toBe(9007199254740993n); // the last duplicate wins, as in JSON.parse
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype); // "__proto__" is an own key, not the prototype
    expect(value.e).toBe(Infinity);
    expect(value.f).toBe(1);
    expect(Object.is(value.g, -0)).toBe(true);
    expect(value.l).toEqual([9007199254740991, -9007199254740992n]);
    expect(() => parseJsonLosslessPortable(`{"a": }`)).toThrow(SyntaxError);
  });
});

describe("metadata file names", () => {
  it("parses Hadoop, catalog and gzip names and nothing else", () => {
    expect(parseMetadataFileName("v12.metadata.json")).toEqual({ sequence: 12, naming: "hadoop", gzip: false });
    expect(parseMetadataFileName("00003-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json")).toEqual({ sequence: 3, naming: "catalog", gzip: false });
    expect(parseMetadataFileName("00004-aaf0d033-d06b-43c7-be60-67f83abd4aca.gz.metadata.json")).toEqual({ sequence: 4, naming: "catalog", gzip: true });
    expect(parseMetadataFileName("v2.metadata.json.gz")).toEqual({ sequence: 2, naming: "hadoop", gzip: true });
    expect(parseMetadataFileName("5b1c-uuid.metadata.json")).toBeNull();
    // A failed Hadoop commit's temp file: a bare UUID, even one whose first group is all digits.
    expect(parseMetadataFileName("12345678-1234-4abc-8def-123456789012.metadata.json")).toBeNull();
    expect(parseMetadataFileName("00012-12345678-1234-4abc-8def-123456789012.metadata.json")).toEqual({ sequence: 12, naming: "catalog", gzip: false });
    expect(parseMetadataFileName("version-hint.text")).toBeNull();
    expect(parseMetadataFileName("snap-1-1-x.avro")).toBeNull();
    expect(parseVersionHint("5\n")).toBe(5);
    expect(parseVersionHint("v7")).toBe(7);
    expect(parseVersionHint("garbage")).toBeNull();
  });

  it("chooses the latest by sequence, not by listing order, and refuses two files with the top sequence", async () => {
    const c = await copy("spark-bunnies");
    const v5 = await readFile(join(c.dir, "metadata/v5.metadata.json"));
    await writeFile(join(c.dir, "metadata/v10.metadata.json"), v5);
    const store = openStore(c.dir);
    const listedOrder: string[] = [];
    for await (const o of store.list("metadata/")) if (o.key.endsWith(".metadata.json")) listedOrder.push(o.key);
    expect(listedOrder.indexOf("metadata/v10.metadata.json")).toBeLessThan(listedOrder.indexOf("metadata/v5.metadata.json"));
    expect((await latestMetadataFile(store))?.key).toBe("metadata/v10.metadata.json");
    expect((await listMetadataFiles(store)).map((f) => f.name.sequence)).toEqual([1, 2, 3, 4, 5, 10]);
    // A catalog-style name in a file-system table is not its commit, whatever its number.
    await writeFile(join(c.dir, "metadata/99999-0b0e4d5c-0000-4000-8000-000000000000.metadata.json"), v5);
    expect((await latestMetadataFile(store))?.key).toBe("metadata/v10.metadata.json");

    const a = await copy("athena-example");
    const text = await readFile(join(a.dir, "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json"));
    await writeFile(join(a.dir, "metadata/00001-ffffffff-0000-0000-0000-000000000000.metadata.json"), text);
    await expect(latestMetadataFile(openStore(a.dir))).rejects.toThrow(CorruptFileError);
    await expect(latestMetadataFile(openStore(a.dir))).rejects.toThrow(/all claim sequence 1/);
  });

  it("reads gzip metadata (.gz.metadata.json) as the same table", async () => {
    const c = await copy("athena-example");
    const plainKey = "metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json";
    const text = await readFile(join(c.dir, plainKey));
    await writeFile(join(c.dir, "metadata/00002-0b0e4d5c-0000-4000-8000-000000000000.gz.metadata.json"), gzipSync(text));
    const store = openStore(c.dir);
    const latest = await latestMetadataFile(store);
    expect(latest?.key).toBe("metadata/00002-0b0e4d5c-0000-4000-8000-000000000000.gz.metadata.json");
    const gz = await readMetadataFile(store, latest!.key);
    const plain = await readMetadataFile(store, plainKey);
    expect(gz.text).toBe(plain.text);
    expect(gz.metadata.snapshots.map((s) => s.id)).toEqual(["6838723292707092922"]);
  });
});

/** icebird's own Avro decoder: an independent reading of the same bytes. */
function icebirdAvro(bytes: Uint8Array): Record<string, unknown>[] {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const { metadata, syncMarker } = avroMetadata(reader);
  return avroRead({ reader, metadata, syncMarker }) as Record<string, unknown>[];
}

describe("manifest lists and manifests", () => {
  it("decode every fixture's Avro files as icebird's decoder does, longs as exact bigints", async () => {
    let lists = 0;
    let manifests = 0;
    for (const name of ICEBERG_FIXTURES) {
      const dir = fixturePath(name);
      for (const key of await listFiles(dir)) {
        const file = key.split("/").pop()!;
        if (!key.startsWith("metadata/") || !file.endsWith(".avro") || file.startsWith(".")) continue;
        const bytes = new Uint8Array(await readFile(join(dir, key)));
        if (name === "big_query_error") {
          // Written by DuckDB's Avro writer, which icebird 0.3.1 cannot decode: no oracle, so
          // only check that ours decodes it and names files that exist in the copy's folders.
          expect(() => icebirdAvro(bytes)).toThrow(/unsupported type/);
          const asList = file.includes("manifest-list") ? await decodeManifestList(bytes, key) : null;
          const named = asList ? asList.map((m) => m.path) : (await decodeManifest(bytes, key, { sequenceNumber: 0n })).map((e) => e.file.path);
          const present = await listFiles(dir);
          for (const path of named)
            expect(
              present.some((k) => path.endsWith(`/${k}`)),
              path,
            ).toBe(true);
          continue;
        }
        const theirs = icebirdAvro(bytes);
        if ("manifest_path" in (theirs[0] ?? {})) {
          const ours = await decodeManifestList(bytes, key);
          expect(
            ours.map((m) => m.path),
            key,
          ).toEqual(theirs.map((r) => r.manifest_path));
          expect(
            ours.map((m) => m.addedSnapshotId),
            key,
          ).toEqual(theirs.map((r) => (r.added_snapshot_id === undefined ? null : String(r.added_snapshot_id))));
          expect(
            ours.map((m) => m.sequenceNumber),
            key,
          ).toEqual(theirs.map((r) => BigInt((r.sequence_number as bigint | undefined) ?? 0n)));
          lists++;
        } else {
          const ours = await decodeManifest(bytes, key, { sequenceNumber: 7n });
          const their = theirs as { status: number; data_file: Record<string, unknown>; sequence_number?: bigint }[];
          expect(
            ours.map((e) => e.status),
            key,
          ).toEqual(their.map((e) => e.status));
          expect(
            ours.map((e) => e.file.path),
            key,
          ).toEqual(their.map((e) => e.data_file.file_path));
          expect(
            ours.map((e) => e.file.content),
            key,
          ).toEqual(their.map((e) => (e.data_file.content as number | undefined) ?? 0));
          expect(
            ours.map((e) => e.file.recordCount),
            key,
          ).toEqual(their.map((e) => BigInt(e.data_file.record_count as bigint)));
          expect(
            ours.map((e) => e.file.fileSizeInBytes),
            key,
          ).toEqual(their.map((e) => BigInt(e.data_file.file_size_in_bytes as bigint)));
          // Inheritance: a null sequence number of an ADDED entry is the manifest list's.
          for (const [i, e] of ours.entries()) {
            const written = their[i]!.sequence_number;
            expect(e.sequenceNumber, key).toBe(written === undefined || written === null ? 7n : BigInt(written));
            if (written === undefined || written === null) expect(e.status === ENTRY_STATUS.ADDED || !("sequence_number" in their[i]!), key).toBe(true);
          }
          manifests++;
        }
      }
    }
    expect(lists).toBeGreaterThanOrEqual(10);
    expect(manifests).toBeGreaterThanOrEqual(10);
  });

  it("refuses a file that is not an Avro container, naming it", async () => {
    await expect(decodeManifestList(new TextEncoder().encode("not avro"), "s3://b/t/metadata/x.avro")).rejects.toThrow(
      /^s3:\/\/b\/t\/metadata\/x\.avro: not a readable Avro container file/,
    );
  });
});
