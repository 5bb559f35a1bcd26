/**
 * Manifest decoding on real manifests written by LanceDB, and on those manifests damaged
 * on purpose: every bad input must be a typed error naming the object and the problem.
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CorruptFileError, UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { FOOTER_SIZE, MANIFEST_SUFFIX_READ, decodeManifestFile, parseFooter, readManifestFile } from "../../../lib/formats/lance/manifest-file.ts";
import type { PbManifest } from "../../../lib/formats/lance/proto-messages.ts";
import { versionFileName } from "../../../lib/formats/lance/version-names.ts";
import { openStore, type ObjectStore } from "../../../lib/store/index.ts";
import { readVersionRecords } from "../../../lib/versions/read-version-records.ts";
import { withManifest as withManifestSurgery } from "../../support/manifest-surgery.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../../support/lance-datasets.ts";

const URI = "file:///lake/t.lance/_versions/18446744073709551614.manifest";

let dir: string;
let dataset: LanceDataset;
/** The newest manifest of a table with fragments, a deletion file, an index and a transaction. */
let manifestBytes: Uint8Array;

beforeAll(async () => {
  dir = await makeTempDir("lw-manifest-file-");
  dataset = await buildLanceDataset({
    dbUri: join(dir, "db"),
    steps: [{ op: "create", rows: 12 }, { op: "append", rows: 12 }, { op: "delete", where: "id % 3 = 0" }, { op: "createIndex" }],
  });
  const latest = versionFileName(dataset.written.at(-1)!.version, "v2");
  manifestBytes = new Uint8Array(await readFile(join(dataset.tableUri, "_versions", latest)));
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

function withManifest(bytes: Uint8Array, mutate: (manifest: PbManifest & Record<string, unknown>) => void): Uint8Array {
  return withManifestSurgery(bytes, URI, mutate);
}

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

/** A store holding only `_versions/{name}` with these bytes, to read through the TableFormat. */
async function tableWithManifest(bytes: Uint8Array, version = 1): Promise<ObjectStore> {
  const store = openStore(await makeTempDir("lw-bad-manifest-"));
  await store.put(`_versions/${versionFileName(version, "v2")}`, bytes);
  return store;
}

describe("decodeManifestFile on a real manifest", () => {
  it("decodes the manifest, its index section and its inline transaction", () => {
    const decoded = decodeManifestFile(manifestBytes, URI);
    expect(decoded.footer.manifestPos).toBeGreaterThan(0);
    expect(decoded.manifest.version).toBe(String(dataset.written.at(-1)!.version));
    expect(decoded.indexSection?.indices.map((index) => index.name)).toEqual(["id_idx"]);
    expect(decoded.inlineTransaction?.operation).toBe("create_index");
  });

  it("accepts a manifest re-encoded unchanged (the test helper is faithful)", () => {
    const same = withManifest(manifestBytes, () => {});
    expect(decodeManifestFile(same, URI).manifest).toEqual(decodeManifestFile(manifestBytes, URI).manifest);
  });
});

describe("decodeManifestFile on bad input", () => {
  it("truncated at the end: no magic", () => {
    const error = errorOf(() => decodeManifestFile(manifestBytes.subarray(0, manifestBytes.length - 7), URI));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toMatch(/^file:\/\/\/lake\/t\.lance\/_versions\/18446744073709551614\.manifest: not a Lance manifest, or truncated/);
  });

  it("truncated at the start: the footer points before the file", () => {
    const error = errorOf(() => decodeManifestFile(manifestBytes.subarray(manifestBytes.length - 40), URI));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toContain(URI);
    expect(error.message).toMatch(/manifest position \d+ in the footer is outside the file \(40 bytes\)/);
  });

  it("too short for a footer", () => {
    const error = errorOf(() => decodeManifestFile(new TextEncoder().encode("LANC"), URI));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toBe(`${URI}: truncated manifest: 4 bytes is too short for a footer`);
  });

  it("wrong magic bytes", () => {
    const bytes = manifestBytes.slice();
    bytes.set(new TextEncoder().encode("LANX"), bytes.length - 4);
    const error = errorOf(() => decodeManifestFile(bytes, URI));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toBe(`${URI}: not a Lance manifest, or truncated: ends with bytes 4c 41 4e 58, expected "LANC" (4c 41 4e 43)`);
  });

  it("garbage protobuf with a consistent length prefix", () => {
    const bytes = manifestBytes.slice();
    const { manifestPos } = parseFooter(bytes, URI);
    bytes.fill(0xff, manifestPos + 4, bytes.length - FOOTER_SIZE);
    const error = errorOf(() => decodeManifestFile(bytes, URI));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toMatch(/: cannot decode the Manifest protobuf: /);
    expect(error.message).toContain(URI);
  });

  it("length prefix that disagrees with the footer", () => {
    const bytes = manifestBytes.slice();
    const { manifestPos } = parseFooter(bytes, URI);
    const view = new DataView(bytes.buffer);
    view.setUint32(manifestPos, view.getUint32(manifestPos, true) - 1, true);
    const shorter = errorOf(() => decodeManifestFile(bytes, URI));
    expect(shorter).toBeInstanceOf(CorruptFileError);
    expect(shorter.message).toMatch(/manifest length prefix says \d+ bytes but \d+ lie between it and the footer/);
    view.setUint32(manifestPos, view.getUint32(manifestPos, true) + 2, true);
    const longer = errorOf(() => decodeManifestFile(bytes, URI));
    expect(longer).toBeInstanceOf(CorruptFileError);
    expect(longer.message).toMatch(/manifest at offset \d+ claims \d+ bytes but only \d+ are available/);
  });

  it("a section offset pointing into the manifest message", () => {
    const bytes = withManifest(manifestBytes, (manifest) => {
      manifest.index_section = String(parseFooter(manifestBytes, URI).manifestPos);
    });
    const error = errorOf(() => decodeManifestFile(bytes, URI));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toMatch(/index section (offset \d+ is outside the manifest file|at offset \d+ claims)/);
  });

  it.each([
    [4096n, "4096"],
    [64n, "64"],
    [1n | (1n << 63n), "9223372036854775808"],
  ])("unknown reader feature flags (%s)", (flag, named) => {
    const bytes = withManifest(manifestBytes, (manifest) => {
      manifest.reader_feature_flags = String(BigInt(manifest.reader_feature_flags) | flag);
    });
    const error = errorOf(() => decodeManifestFile(bytes, URI));
    expect(error).toBeInstanceOf(UnsupportedFeatureError);
    expect(error.message).toMatch(new RegExp(`^${URI.replaceAll(".", "\\.")}: manifest requires reader feature flags unknown to lakewarden: ${named} \\(`));
  });

  it("known flags are accepted", () => {
    const bytes = withManifest(manifestBytes, (manifest) => {
      manifest.reader_feature_flags = String(1 | 2 | 8 | 16 | 32);
    });
    expect(decodeManifestFile(bytes, URI).manifest.reader_feature_flags).toBe("59");
  });
});

describe("readSnapshot on bad input", () => {
  it("names the manifest's URI for a corrupt file", async () => {
    const bytes = manifestBytes.slice();
    bytes.set(new TextEncoder().encode("XXXX"), bytes.length - 4);
    const store = await tableWithManifest(bytes);
    const error = await rejectionOf(readVersionRecords(store, lanceFormat));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message.startsWith(`${store.uri}/_versions/18446744073709551614.manifest: not a Lance manifest`)).toBe(true);
    await removeDir(new URL(store.uri).pathname);
  });

  it.each([
    ["../../outside.lance", "unresolvable", /has a "\.\." segment/],
    ["/etc/passwd", "outside", /not under the table root/],
    ["s3://other-bucket/x.lance", "outside", /not under the table root/],
    ["", "unresolvable", /empty/],
  ])("a data file path that is not a key under the root is reported, never referenced: %j", async (path, kind, reason) => {
    const bytes = withManifest(manifestBytes, (manifest) => {
      manifest.version = "1";
      manifest.fragments[0]!.files[0]!.path = path;
    });
    const store = await tableWithManifest(bytes);
    const [file] = await lanceFormat.listVersionFiles(store);
    const snapshot = await lanceFormat.readSnapshot(store, file!);
    expect(snapshot.referencedFiles.some((f) => f.path.includes(path) && path !== "")).toBe(false);
    expect(snapshot.unresolvedReferences).toEqual([{ path, kind, reason: expect.stringMatching(reason) }]);
    await removeDir(new URL(store.uri).pathname);
  });

  it("a transaction file path that would escape the table root is reported, never referenced", async () => {
    const bytes = withManifest(manifestBytes, (manifest) => {
      manifest.version = "1";
      manifest.transaction_file = "../_versions/1.manifest";
    });
    const store = await tableWithManifest(bytes);
    const [file] = await lanceFormat.listVersionFiles(store);
    const snapshot = await lanceFormat.readSnapshot(store, file!);
    expect(snapshot.referencedFiles.some((f) => f.role === "transaction")).toBe(false);
    expect(snapshot.unresolvedReferences).toEqual([{ path: "../_versions/1.manifest", kind: "unresolvable", reason: expect.stringMatching(/has a "\.\." segment/) }]);
    await removeDir(new URL(store.uri).pathname);
  });

  it("refuses a manifest whose version disagrees with its file name", async () => {
    const store = await tableWithManifest(
      withManifest(manifestBytes, (m) => void (m.version = "7")),
      1,
    );
    const [file] = await lanceFormat.listVersionFiles(store);
    const error = await rejectionOf(lanceFormat.readSnapshot(store, file!));
    expect(error).toBeInstanceOf(CorruptFileError);
    expect(error.message).toMatch(/manifest says version 7 but its file name says 1$/);
    await removeDir(new URL(store.uri).pathname);
  });
});

describe("readManifestFile", () => {
  it("reads a manifest larger than the first 64 KiB read in two ranged GETs", async () => {
    const big = await buildLanceDataset({
      dbUri: join(dir, "big"),
      steps: [{ op: "create", rows: 5 }],
      schemaMetadata: { padding: "p".repeat(100_000) },
    });
    try {
      const names = (await readdir(join(big.tableUri, "_versions"))).filter((n) => n.endsWith(".manifest"));
      const key = `_versions/${names[0]}`;
      const onDisk = new Uint8Array(await readFile(join(big.tableUri, key)));
      expect(onDisk.length).toBeGreaterThan(MANIFEST_SUFFIX_READ);
      const store = openStore(big.tableUri);
      const read = await readManifestFile(store, key);
      expect(read.bytes).toEqual(onDisk);
      expect(store.stats.snapshot().get).toBe(2);
      const records = await readVersionRecords(store, lanceFormat);
      expect(records.map((r) => r.total_rows)).toEqual([5]);
    } finally {
      big.close();
    }
  });

  it("reads a small manifest of known size with one GET", async () => {
    const store = openStore(dataset.tableUri);
    const [file] = await lanceFormat.listVersionFiles(store);
    store.stats.reset();
    const read = await readManifestFile(store, file!.key, file!.size);
    expect(read.bytes.length).toBe(file!.size);
    expect(store.stats.snapshot().get).toBe(1);
  });
});
