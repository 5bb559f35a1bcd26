/**
 * Cleanup's lean manifest decode (decodeManifestLiveFiles: each live entry's path, content, size
 * and rows, nothing else held) against the full decode a head uses, on every fixture manifest and
 * on damaged copies of them: the same entries, the same refusals. And the proof's reuse of the
 * scan's decode: a reader remembers the exact bytes it decoded whole, so a manifest damaged after
 * the scan read it is still decoded, and refused, by the proof.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decodeManifest, decodeManifestList, decodeManifestLiveFiles, ENTRY_STATUS, type ManifestFile } from "../../../lib/formats/iceberg/manifests.ts";
import { proveIcebergFile } from "../../../lib/formats/iceberg/prove-file.ts";
import { metadataReferences, reachableFiles } from "../../../lib/formats/iceberg/reachable.ts";
import { IcebergFileReader, readSnapshotFiles } from "../../../lib/formats/iceberg/snapshot-files.ts";
import { icebergPathResolver } from "../../../lib/formats/iceberg/table-paths.ts";
import { openIcebergTable } from "../../../lib/formats/iceberg/table-state.ts";
import { openStore } from "../../../lib/store/index.ts";
import { BROKEN_FIXTURES, copyIcebergFixture, fixtureOpenOptions, fixturePath, ICEBERG_FIXTURES, listFiles, type FixtureCopy } from "../../support/iceberg-fixtures.ts";

const copies: FixtureCopy[] = [];
afterAll(async () => {
  await Promise.all(copies.map((c) => c.remove()));
});

/** Every manifest (not manifest list) of the fixtures ours decodes, with its bytes. */
async function fixtureManifests(): Promise<{ key: string; bytes: Uint8Array }[]> {
  const out: { key: string; bytes: Uint8Array }[] = [];
  for (const name of ICEBERG_FIXTURES) {
    if (BROKEN_FIXTURES.includes(name)) continue;
    const dir = fixturePath(name);
    for (const key of await listFiles(dir)) {
      const file = key.split("/").pop()!;
      if (!key.startsWith("metadata/") || !file.endsWith(".avro") || file.startsWith(".") || file.startsWith("snap-") || file.includes("manifest-list")) continue;
      const bytes = new Uint8Array(await readFile(join(dir, key)));
      // A manifest list under another name decodes as one: not a manifest.
      if (await isManifestList(bytes, key)) continue;
      out.push({ key: `${name}/${key}`, bytes });
    }
  }
  return out;
}

async function isManifestList(bytes: Uint8Array, key: string): Promise<boolean> {
  try {
    await decodeManifestList(bytes, key);
    return true;
  } catch {
    return false;
  }
}

/** What the full decode gives, as the lean one keeps it; or the refusal's message. */
async function fullView(bytes: Uint8Array, uri: string, sequenceNumber: bigint): Promise<unknown> {
  try {
    const entries = await decodeManifest(bytes, uri, { sequenceNumber });
    return entries
      .filter((e) => e.status !== ENTRY_STATUS.DELETED)
      .map((e) => ({ path: e.file.path, content: e.file.content, fileSizeInBytes: e.file.fileSizeInBytes, recordCount: e.file.recordCount }));
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

async function leanView(bytes: Uint8Array, uri: string, sequenceNumber: bigint): Promise<unknown> {
  try {
    return await decodeManifestLiveFiles(bytes, uri, { sequenceNumber });
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

describe("cleanup's lean manifest decode", () => {
  it("gives every fixture manifest's live entries as the full decode does, with either inherited sequence number", async () => {
    const manifests = await fixtureManifests();
    expect(manifests.length).toBeGreaterThanOrEqual(5);
    let live = 0;
    for (const { key, bytes } of manifests) {
      for (const sequenceNumber of [0n, 7n]) {
        const lean = await leanView(bytes, key, sequenceNumber);
        expect(lean, key).toEqual(await fullView(bytes, key, sequenceNumber));
        if (Array.isArray(lean)) live += lean.length;
      }
    }
    expect(live).toBeGreaterThan(0);
  });

  it("refuses the damaged manifests the full decode refuses, in the same words, and reads the rest alike", async () => {
    let refused = 0;
    for (const { key, bytes } of await fixtureManifests()) {
      const damaged = [bytes.subarray(0, Math.floor(bytes.length / 2)), bytes.subarray(0, bytes.length - 1), flipped(bytes, Math.floor(bytes.length * 0.6))];
      for (const variant of damaged) {
        const lean = await leanView(variant, key, 7n);
        expect(lean, key).toEqual(await fullView(variant, key, 7n));
        if (!Array.isArray(lean)) refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
  });
});

describe("the proof takes the reader's whole decode of the same bytes", () => {
  it("knows the bytes it decoded whole, and only those: not one byte changed, not a file it failed on or never read", async () => {
    const { store, key, listed } = await copiedManifest();
    const reader = new IcebergFileReader(store);
    const bytes = (await store.get(key)).body;
    expect(reader.decodedWhole(key, bytes)).toBe(false);
    expect((await reader.liveFiles(key, listed, "manifest")).length).toBeGreaterThan(0);
    expect(reader.decodedWhole(key, bytes)).toBe(true);
    expect(reader.decodedWhole(key, flipped(bytes, 100))).toBe(false);
    expect(reader.decodedWhole(`${key}.other`, bytes)).toBe(false);

    const cut = `${key.slice(0, -".avro".length)}-cut.avro`;
    await store.put(cut, bytes.subarray(0, bytes.length - 10));
    await expect(reader.liveFiles(cut, listed, "manifest")).rejects.toThrow(/truncated Avro container file/);
    expect(reader.decodedWhole(cut, bytes.subarray(0, bytes.length - 10))).toBe(false);
  });

  it("a manifest damaged after the scan decoded it (same size) is decoded again by the proof and refused; the untouched one passes", async () => {
    const { store, key, listed } = await copiedManifest();
    const reader = new IcebergFileReader(store);
    await reader.liveFiles(key, listed, "manifest");
    const reference = { path: key, role: "manifest" };
    expect(await proveIcebergFile(store, reference, await store.head(key), reader)).toBeNull();

    const bytes = (await store.get(key)).body;
    // Cut inside the last block, padded back to the same length: the container's framing no longer holds.
    const damaged = new Uint8Array(bytes.length);
    damaged.set(bytes.subarray(0, bytes.length - 40));
    await store.put(key, damaged);
    expect((await store.head(key)).size).toBe(bytes.length);
    expect(await proveIcebergFile(store, reference, await store.head(key), reader)).toMatch(/Avro container file/);
  });
});

describe("a manifest's references are worked out once per table", () => {
  it("snapshots listing the same manifest share its references, which name what resolving each path names", async () => {
    const store = openStore(fixturePath("spark-bunnies"));
    const table = await openIcebergTable(store);
    expect(icebergPathResolver(table.read.metadata.location, store.uri)).toBe(table.resolve);
    const reader = new IcebergFileReader(store);
    const uri = store.uriOf(table.metadataKey);
    const reads = await Promise.all(table.read.metadata.snapshots.map((s) => readSnapshotFiles(reader, table.read.metadata, s, table.resolve, uri)));
    let shared = 0;
    for (const [i, read] of reads.entries()) {
      const expected = read.manifests
        .flatMap((m) => m.live)
        .map((file) => table.resolve(file.path))
        .map((resolved) => (resolved.kind === "key" ? resolved.key : null));
      expect(
        read.references.filter((r) => r.role === "data" || r.role === "delete").map((r) => r.path),
        `snapshot ${i}`,
      ).toEqual([...new Set(expected)]);
      for (const other of reads.slice(i + 1)) {
        for (const reference of read.references) {
          if (reference.role !== "data") continue;
          const same = other.references.find((r) => r.path === reference.path);
          if (same) {
            expect(same).toBe(reference);
            shared++;
          }
        }
      }
    }
    expect(shared).toBeGreaterThan(0);
  });
});

describe("the expiry's reachable set", () => {
  it("reaches, with each manifest walked once, what every snapshot's own files reach, roles included", async () => {
    let compared = 0;
    for (const name of ICEBERG_FIXTURES) {
      if (BROKEN_FIXTURES.includes(name)) continue;
      const store = openStore(fixturePath(name));
      const table = await openIcebergTable(store, fixtureOpenOptions(name));
      const { metadata } = table.read;
      const uri = store.uriOf(table.metadataKey);
      const hasHint = table.versionHint !== null;
      const reachable = await reachableFiles(new IcebergFileReader(store), metadata, table.metadataKey, table.resolve, hasHint);
      const expected = new Map<string, string>();
      const unresolved: string[] = [];
      for (const snapshot of metadata.snapshots) {
        const files = await readSnapshotFiles(new IcebergFileReader(store), metadata, snapshot, table.resolve, uri);
        for (const reference of files.references) if (!expected.has(reference.path)) expected.set(reference.path, reference.role);
        unresolved.push(...files.unresolved.map((u) => u.path));
      }
      for (const reference of metadataReferences(metadata, table.metadataKey, table.resolve, hasHint).references) {
        if (!expected.has(reference.path)) expected.set(reference.path, reference.role);
      }
      expect(new Map([...reachable.keys].sort()), name).toEqual(new Map([...expected].sort()));
      expect(new Set(reachable.unresolved.map((u) => u.path)), name).toEqual(new Set(unresolved));
      compared += metadata.snapshots.length;
    }
    expect(compared).toBeGreaterThanOrEqual(5);
  });
});

/** A writable copy of a fixture, one of its manifests, and its manifest-list entry's sequence number. */
async function copiedManifest(): Promise<{ store: ReturnType<typeof openStore>; key: string; listed: ManifestFile }> {
  const copy = await copyIcebergFixture("spark-bunnies");
  copies.push(copy);
  const store = openStore(copy.dir);
  const listKey = (await listFiles(copy.dir)).find((k) => k.startsWith("metadata/snap-") && k.endsWith(".avro"))!;
  const [listed] = await decodeManifestList((await store.get(listKey)).body, listKey);
  const key = `metadata/${listed!.path.split("/").pop()!}`;
  return { store, key, listed: listed! };
}

function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}
