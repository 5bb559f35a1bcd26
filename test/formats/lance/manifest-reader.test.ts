/**
 * The manifest reader without `toObject` (manifest-reader.ts) is equal to the protobufjs
 * `toObject` decoding (decodeManifestFile + toLanceManifest, referencedFiles, summarizeManifest)
 * on every manifest of real LanceDB tables (V1 and V2 names; deletions, an index, tags,
 * overwrite, update), on manifests rewritten to reach the edge cases (base ids, 64-bit values
 * above 2^53, deletion ids above 2^53, unknown fields), and on bad input (same error class and message).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CorruptFileError, UnsupportedFeatureError } from "../../../lib/formats/errors.ts";
import type { FileReference, ReferenceSequence } from "../../../lib/model/file-reference.ts";
import { decodeManifestFile } from "../../../lib/formats/lance/manifest-file.ts";
import { toLanceManifest, toTransaction } from "../../../lib/formats/lance/manifest-model.ts";
import { decodeLanceCleanupView, decodeLanceManifestFile, decodeLanceTransaction, FragmentCache } from "../../../lib/formats/lance/manifest-reader.ts";
import { decodeTransaction, lanceProtoRoot } from "../../../lib/formats/lance/proto-messages.ts";
import { referencedFiles } from "../../../lib/formats/lance/snapshot-files.ts";
import { summarizeManifest } from "../../../lib/formats/lance/summary.ts";
import { buildLanceDataset, makeTempDir, removeDir, STANDARD_HISTORY, type LanceDataset } from "../../support/lance-datasets.ts";
import { withFieldOrder, withGarbageManifest, withManifest } from "../../support/manifest-surgery.ts";

let dir: string;
const datasets: LanceDataset[] = [];
/** name → bytes of every manifest and transaction file of the tables. */
const manifests = new Map<string, Uint8Array>();
const transactions = new Map<string, Uint8Array>();

beforeAll(async () => {
  dir = await makeTempDir("lw-manifest-reader-");
  for (const naming of ["v1", "v2"] as const) {
    const dataset = await buildLanceDataset({ dbUri: join(dir, naming), naming, steps: STANDARD_HISTORY });
    datasets.push(dataset);
    for (const name of await readdir(join(dataset.tableUri, "_versions"))) {
      if (!name.endsWith(".manifest")) continue;
      manifests.set(`${naming}/${name}`, new Uint8Array(await readFile(join(dataset.tableUri, "_versions", name))));
    }
    for (const name of await readdir(join(dataset.tableUri, "_transactions"))) {
      transactions.set(`${naming}/${name}`, new Uint8Array(await readFile(join(dataset.tableUri, "_transactions", name))));
    }
  }
}, 120_000);
afterAll(async () => {
  for (const dataset of datasets) dataset.close();
  await removeDir(dir);
});

/** What the protobufjs `toObject` path says of a manifest file. */
function reference(bytes: Uint8Array, uri: string) {
  const decoded = decodeManifestFile(bytes, uri);
  const manifest = toLanceManifest(decoded, uri);
  return {
    manifest,
    inlineTransaction: decoded.inlineTransaction ? toTransaction(decoded.inlineTransaction, uri) : null,
    references: referencedFiles(manifest, tableUriOf(uri)),
    totals: summarizeManifest(manifest),
  };
}

function expectEqualDecodings(bytes: Uint8Array, uri: string, cache?: FragmentCache): void {
  const expected = reference(bytes, uri);
  const full = decodeLanceManifestFile(bytes, uri);
  expect(full.manifest).toStrictEqual(expected.manifest);
  expect(full.inlineTransaction).toStrictEqual(expected.inlineTransaction);
  const decoded = decodeLanceCleanupView(bytes, uri, tableUriOf(uri), cache);
  const { sequence, ...view } = { ...decoded, references: decoded.references };
  // The references as one list and as the sequence the pipeline reads are the same.
  const listed = [...sequence.chunks.slice(0, sequence.count).flatMap((chunk) => chunk.references), ...sequence.extra];
  expect(listed).toStrictEqual(expected.references.files);
  expect(view).toStrictEqual({
    version: expected.manifest.version,
    timestampNanos: expected.manifest.timestampNanos,
    totals: expected.totals,
    references: expected.references.files,
    unresolved: expected.references.unresolved,
    config: expected.manifest.config,
    branch: expected.manifest.branch,
    transactionFile: expected.manifest.transactionFile,
    inlineTransaction: expected.inlineTransaction,
  });
}

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

/**
 * Both depths fail as their protobufjs counterparts do: same class, same message (the full
 * decoding validates no path, as toLanceManifest does not; the cleanup view does, as
 * referencedFiles does). Returns the cleanup view's error.
 */
function expectSameError(bytes: Uint8Array, uri: string): Error {
  const fullExpected = (() => {
    try {
      return toLanceManifest(decodeManifestFile(bytes, uri), uri);
    } catch (error) {
      return error as Error;
    }
  })();
  if (fullExpected instanceof Error) {
    const error = errorOf(() => decodeLanceManifestFile(bytes, uri));
    expect(error.constructor).toBe(fullExpected.constructor);
    expect(error.message).toBe(fullExpected.message);
  } else {
    expect(decodeLanceManifestFile(bytes, uri).manifest).toStrictEqual(fullExpected);
  }
  const expected = errorOf(() => reference(bytes, uri));
  const error = errorOf(() => decodeLanceCleanupView(bytes, uri, tableUriOf(uri)));
  expect(error.constructor).toBe(expected.constructor);
  expect(error.message).toBe(expected.message);
  return expected;
}

describe("manifest-reader equals the toObject decoding", () => {
  it("on every manifest of real LanceDB tables (V1 and V2 names, deletions, index, tags)", () => {
    expect(manifests.size).toBeGreaterThanOrEqual(16);
    const kinds = { deletions: 0, indices: 0, inlineTransactions: 0, transactionFiles: 0 };
    const cache = new FragmentCache();
    for (const [name, bytes] of manifests) {
      expectEqualDecodings(bytes, name);
      // Again through a cache that has seen the table's other versions.
      expectEqualDecodings(bytes, name, cache);
      const { manifest, inlineTransaction } = decodeLanceManifestFile(bytes, name);
      if (manifest.fragments.some((fragment) => fragment.deletionFile)) kinds.deletions++;
      if (manifest.indices.length > 0) kinds.indices++;
      if (inlineTransaction) kinds.inlineTransactions++;
      if (manifest.transactionFile) kinds.transactionFiles++;
    }
    expect(cache.size).toBeGreaterThan(0);
    // The tables exercise every part the reader decodes.
    expect(kinds.deletions).toBeGreaterThan(0);
    expect(kinds.indices).toBeGreaterThan(0);
    expect(kinds.inlineTransactions).toBeGreaterThan(0);
    expect(kinds.transactionFiles).toBeGreaterThan(0);
  });

  it("on every transaction file", () => {
    expect(transactions.size).toBeGreaterThan(0);
    for (const [name, bytes] of transactions) {
      expect(decodeLanceTransaction(bytes, name)).toStrictEqual(toTransaction(decodeTransaction(bytes, name), name));
    }
  });

  it("on rewritten manifests: base ids, optional fields, big 64-bit values, several files per fragment", () => {
    const [name, bytes] = [...manifests].find(([, b]) => decodeLanceManifestFile(b, "x").manifest.fragments.some((f) => f.deletionFile))!;
    const rewritten = withManifest(bytes, name, (manifest) => {
      const [first, second] = manifest.fragments;
      first!.files.push({ ...first!.files[0]!, path: "other/file.lance", base_id: 3, file_size_bytes: "0" });
      first!.files[0]!.file_size_bytes = String(2 ** 40);
      if (second) second.files[0]!.base_id = 0;
      const withDeletion = manifest.fragments.find((fragment) => fragment.deletion_file)!;
      withDeletion.deletion_file!.id = "18446744073709551615";
      withDeletion.deletion_file!.read_version = String(2n ** 60n);
      manifest.fragments.push({ ...withDeletion, id: "4000000", deletion_file: { ...withDeletion.deletion_file!, base_id: 2, num_deleted_rows: "0" } });
      manifest.next_row_id = "18446744073709551615";
      manifest.writer_feature_flags = String(2n ** 63n + 5n);
      manifest.branch = "dev";
      manifest.max_fragment_id = 4000000;
      manifest.timestamp = { seconds: "-5", nanos: 7 };
      manifest.base_paths = [
        { id: 3, name: "b", is_dataset_root: true, path: "s3://elsewhere/t.lance" },
        { id: 2, is_dataset_root: false, path: "x" },
      ];
      manifest.table_metadata = { a: "b" };
      manifest.config = { "lance.auto_cleanup.interval": "20", empty: "", "ü": "✓" };
    });
    expectEqualDecodings(rewritten, name);
    const { manifest } = decodeLanceManifestFile(rewritten, name);
    expect(manifest.fragments[0]!.files).toHaveLength(2);
    expect(manifest.nextRowId).toBe(2n ** 64n - 1n);
  });

  it("through a cache that saw the previous version: a shared run of fragments is reused only when every byte matches", () => {
    const [name, bytes] = [...manifests].find(([, b]) => decodeLanceManifestFile(b, "x").manifest.fragments.length >= 2)!;
    const cache = new FragmentCache();
    // One more fragment at the end (an append): the run of the others is shared.
    const appended = withManifest(bytes, name, (manifest) => {
      manifest.fragments.push({ ...manifest.fragments[0]!, id: "9000", files: [{ ...manifest.fragments[0]!.files[0]!, path: "appended.lance" }] });
    });
    // The first fragment's data file renamed to a path of the same length: every range lines
    // up with the previous version's, but the bytes differ.
    const renamed = withManifest(bytes, name, (manifest) => {
      const file = manifest.fragments[0]!.files[0]!;
      file.path = `${file.path.slice(0, -7)}x${file.path.slice(-6)}`;
    });
    // The last fragment's row count changed: a shorter run is shared, the rest decoded.
    const changedLast = withManifest(bytes, name, (manifest) => {
      manifest.fragments.at(-1)!.physical_rows = "77";
    });
    const sequences: { sequence: ReferenceSequence; expected: FileReference[] }[] = [];
    for (const manifest of [bytes, appended, bytes, renamed, bytes, changedLast, appended, changedLast]) {
      expectEqualDecodings(manifest, name, cache);
      sequences.push({ sequence: decodeLanceCleanupView(manifest, name, tableUriOf(name), cache).sequence, expected: reference(manifest, name).references.files });
    }
    // A version's sequence still says its references after later versions grew the chunks it shares with them.
    for (const { sequence, expected } of sequences)
      expect([...sequence.chunks.slice(0, sequence.count).flatMap((chunk) => chunk.references), ...sequence.extra]).toStrictEqual(expected);
    const renamedPaths = decodeLanceCleanupView(renamed, name, tableUriOf(name), cache).references.map((r) => r.path);
    expect(renamedPaths.some((path) => path.endsWith(`x${decodeLanceManifestFile(bytes, name).manifest.fragments[0]!.files[0]!.path.slice(-6)}`))).toBe(true);
  });

  it("through a cache: a version that fails to decode after taking the last one's run leaves nothing half-grown for the next", () => {
    const [name, written] = [...manifests].find(([, b]) => decodeLanceManifestFile(b, "x").manifest.fragments.length >= 2)!;
    // Encoded as the versions below are, so their runs of fragments start with its bytes.
    const bytes = withManifest(written, name, () => {});
    type Fragments = Parameters<Parameters<typeof withManifest>[2]>[0]["fragments"];
    const extra = (fragments: Fragments, id: string, path: string) => ({ ...fragments[0]!, id, files: [{ ...fragments[0]!.files[0]!, path }], deletion_file: null });
    const appended = withManifest(bytes, name, (manifest) => {
      manifest.fragments.push(extra(manifest.fragments, "9000", "appended.lance"));
    });
    // The same append, then a fragment that cannot be read: the run of `bytes` was taken and grown by one before the error.
    const failing = withManifest(bytes, name, (manifest) => {
      const unreadable = { ...extra(manifest.fragments, "9001", "other.lance"), deletion_file: { file_type: 7, read_version: "1", id: "2", num_deleted_rows: "1" } };
      manifest.fragments.push(extra(manifest.fragments, "9000", "appended.lance"), unreadable);
    });
    const cache = new FragmentCache();
    expectEqualDecodings(bytes, name, cache);
    expect(errorOf(() => decodeLanceCleanupView(failing, name, tableUriOf(name), cache))).toBeInstanceOf(UnsupportedFeatureError);
    for (const manifest of [appended, bytes, appended]) expectEqualDecodings(manifest, name, cache);
  });

  it("through a cache: a run of fragments with another field among them is walked again, not taken whole", () => {
    const [name, bytes] = [...manifests].find(([, b]) => decodeLanceManifestFile(b, "x").manifest.fragments.length >= 2)!;
    const manifestType = lanceProtoRoot.lookupType("lance.table.Manifest");
    const fragmentsField = manifestType.fields.fragments!.id;
    const versionField = manifestType.fields.version!.id;
    // The version field moved between the first two fragments: a version whose bytes repeat the
    // last one's from the first fragment on must still have its version read from among them.
    const interleaved = withFieldOrder(bytes, name, (fields) => {
      const version = fields.filter((f) => f.field === versionField);
      const others = fields.filter((f) => f.field !== versionField);
      const firstFragment = others.findIndex((f) => f.field === fragmentsField);
      return [...others.slice(0, firstFragment + 1), ...version, ...others.slice(firstFragment + 1)];
    });
    expect(decodeLanceManifestFile(interleaved, name).manifest.version).toBe(decodeLanceManifestFile(bytes, name).manifest.version);
    const cache = new FragmentCache();
    for (const manifest of [interleaved, interleaved, bytes, interleaved, bytes, bytes]) expectEqualDecodings(manifest, name, cache);
  });

  it("skips fields it does not read, as protobufjs does (newer writers' additions)", () => {
    const [name, bytes] = [...manifests][0]!;
    const rewritten = withManifest(bytes, name, (manifest) => {
      (manifest.fragments[0] as unknown as Record<string, unknown>).inline_row_ids = new Uint8Array([1, 2, 3]);
      manifest.fragments[0]!.external_row_ids = { path: "rows", offset: "1", size: "2" };
      manifest.schema_metadata = new Uint8Array(70_000).fill(7);
    });
    expectEqualDecodings(rewritten, name);
  });
  it("reads lengths at the varint boundaries (127, 128, 16,383 and 16,384 bytes) as protobufjs does, in fields it reads and fields it skips", () => {
    const [name, bytes] = [...manifests][0]!;
    for (const length of [0, 1, 127, 128, 129, 16_383, 16_384, 16_385]) {
      const rewritten = withManifest(bytes, name, (manifest) => {
        manifest.config = { ...manifest.config, boundary: "v".repeat(length) };
        manifest.schema_metadata = { ...(manifest.schema_metadata as Record<string, Uint8Array>), boundary: new Uint8Array(length).fill(3) };
      });
      expectEqualDecodings(rewritten, name);
    }
  });
});

describe("manifest-reader on bad input fails as the toObject decoding does", () => {
  const first = (): [string, Uint8Array] => [...manifests][0]!;

  it("garbage protobuf", () => {
    const [name, bytes] = first();
    expect(errorOf(() => decodeLanceManifestFile(withGarbageManifest(bytes, name), name))).toBeInstanceOf(CorruptFileError);
    expect(errorOf(() => decodeLanceCleanupView(withGarbageManifest(bytes, name), name, tableUriOf(name)))).toBeInstanceOf(CorruptFileError);
  });

  it("truncated file", () => {
    const [name, bytes] = first();
    expectSameError(bytes.subarray(0, bytes.length - 7), name);
  });

  it("unknown reader feature flags", () => {
    const [name, bytes] = first();
    const flagged = withManifest(bytes, name, (manifest) => {
      manifest.reader_feature_flags = String(BigInt(manifest.reader_feature_flags) | 4096n);
    });
    expect(expectSameError(flagged, name)).toBeInstanceOf(UnsupportedFeatureError);
  });

  it.each([
    ["a file size above 2^53", (m: Record<string, any>) => (m.fragments[0].files[0].file_size_bytes = String(2n ** 60n))],
    ["a fragment id above 2^53", (m: Record<string, any>) => (m.fragments[0].id = String(2n ** 60n))],
    ["physical rows above 2^53", (m: Record<string, any>) => (m.fragments[0].physical_rows = String(2n ** 54n))],
    ["a deletion file of unknown type", (m: Record<string, any>) => (m.fragments[0].deletion_file = { file_type: 7, read_version: "1", id: "2", num_deleted_rows: "1" })],
    ["a version above 2^53", (m: Record<string, any>) => (m.version = String(2n ** 60n))],
    ["a transaction section offset above 2^53", (m: Record<string, any>) => (m.transaction_section = String(2n ** 60n))],
  ])("%s", (_what, mutate) => {
    const [name, bytes] = first();
    expectSameError(withManifest(bytes, name, mutate), name);
  });

  it.each([
    ["a data path escaping the root", (m: Record<string, any>) => (m.fragments[0].files[0].path = "../x.lance"), "../x.lance", "unresolvable"],
    ["a transaction file outside the root", (m: Record<string, any>) => (m.transaction_file = "/etc/x.txn"), "/etc/x.txn", "outside"],
  ])("%s: both decodings report it unresolved, never as a key", (_what, mutate, path, kind) => {
    const [name, bytes] = first();
    const changed = withManifest(bytes, name, mutate);
    expectEqualDecodings(changed, name);
    expect(decodeLanceCleanupView(changed, name, tableUriOf(name)).unresolved).toEqual([{ path, kind, reason: expect.any(String) }]);
  });
});

/** The table root a manifest's URI sits in (`{root}/_versions/{name}`). */
function tableUriOf(manifestUri: string): string {
  const at = manifestUri.lastIndexOf("/_versions/");
  return at === -1 ? manifestUri : manifestUri.slice(0, at);
}
