/** readLanceDataFileFooter on real LanceDB data files and on crafted tails (large, legacy, foreign). */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CorruptFileError } from "../../../lib/formats/errors.ts";
import { readLanceDataFileFooter } from "../../../lib/formats/lance/data-file-footer.ts";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../../support/lance-datasets.ts";
import type { LanceDataset } from "../../support/lance-datasets.ts";

let dir: string;
let dataset: LanceDataset;

beforeAll(async () => {
  dir = await makeTempDir("lw-footer-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 20 },
      { op: "append", rows: 5 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

/** A v2 footer: column metadata at `columnMeta`, one global buffer (the schema) at `schema`. */
function v2Tail(schema: number, columnMeta: number, gboTable: number): Uint8Array {
  const bytes = new Uint8Array(16 + 40);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, BigInt(schema), true);
  view.setBigUint64(8, 100n, true);
  const footer = 16;
  view.setBigUint64(footer, BigInt(columnMeta), true);
  view.setBigUint64(footer + 8, BigInt(gboTable), true);
  view.setBigUint64(footer + 16, BigInt(gboTable), true);
  view.setUint32(footer + 24, 1, true);
  view.setUint32(footer + 28, 3, true);
  view.setUint16(footer + 32, 2, true);
  view.setUint16(footer + 34, 0, true);
  bytes.set(new TextEncoder().encode("LANC"), footer + 36);
  return bytes;
}

describe("readLanceDataFileFooter", () => {
  it("returns a self-contained metadata tail of every real data file with one GET each", async () => {
    const store = new LocalStore(dataset.tableUri);
    const snapshot = await lanceFormat.readSnapshot(store, (await lanceFormat.latestVersionFile(store))!);
    const paths = snapshot.liveFiles.flatMap((f) => f.paths);
    expect(paths.length).toBe(2);
    for (const path of paths) {
      store.stats.reset();
      const footer = await readLanceDataFileFooter(store, path);
      expect(store.stats.snapshot().get).toBe(1);
      expect(footer.offset + footer.bytes.length).toBe(footer.fileSize);
      // Every pointer in the 40-byte footer lands inside the returned bytes.
      const view = new DataView(footer.bytes.buffer, footer.bytes.byteOffset, footer.bytes.byteLength);
      const end = footer.bytes.length;
      const columnMetaStart = Number(view.getBigUint64(end - 40, true));
      const gboStart = Number(view.getBigUint64(end - 24, true));
      const buffers = view.getUint32(end - 16, true);
      expect(columnMetaStart).toBeGreaterThanOrEqual(footer.offset);
      for (let i = 0; i < buffers; i++) {
        const position = Number(view.getBigUint64(gboStart - footer.offset + i * 16, true));
        expect(position).toBeGreaterThanOrEqual(footer.offset);
      }
    }
  });

  it("makes a second ranged read when the metadata is larger than the first suffix read", async () => {
    const root = await makeTempDir("lw-footer-big-");
    try {
      const data = 10_000;
      const schema = data;
      const columnMeta = schema + 150_000;
      const gboTable = columnMeta + 100;
      const body = new Uint8Array(gboTable).map((_, i) => i % 251);
      await mkdir(join(root, "data"));
      await writeFile(join(root, "data", "big.lance"), Buffer.concat([body, v2Tail(schema, columnMeta, gboTable)]));
      const store = new LocalStore(root);
      const footer = await readLanceDataFileFooter(store, "data/big.lance");
      expect(store.stats.snapshot().get).toBe(2);
      expect(footer.offset).toBe(schema);
      expect(footer.bytes.length).toBe(footer.fileSize - schema);
      expect(footer.bytes[0]).toBe(schema % 251);
    } finally {
      await removeDir(root);
    }
  });

  it("reads a legacy (0.1/0.2) footer from its metadata position", async () => {
    const root = await makeTempDir("lw-footer-legacy-");
    try {
      const tail = new Uint8Array(16);
      const view = new DataView(tail.buffer);
      view.setBigInt64(0, 300n, true);
      view.setUint16(8, 0, true);
      view.setUint16(10, 2, true);
      tail.set(new TextEncoder().encode("LANC"), 12);
      await mkdir(join(root, "data"));
      await writeFile(join(root, "data", "old.lance"), Buffer.concat([new Uint8Array(400), tail]));
      const footer = await readLanceDataFileFooter(new LocalStore(root), "data/old.lance");
      expect(footer).toMatchObject({ offset: 300, fileSize: 416 });
      expect(footer.bytes.length).toBe(116);
    } finally {
      await removeDir(root);
    }
  });

  it("refuses a file that is not a Lance data file, naming it", async () => {
    const root = await makeTempDir("lw-footer-foreign-");
    try {
      await mkdir(join(root, "data"));
      await writeFile(join(root, "data", "x.lance"), "PAR1 this is parquet, honestly PAR1");
      const read = readLanceDataFileFooter(new LocalStore(root), "data/x.lance");
      await expect(read).rejects.toThrow(CorruptFileError);
      await expect(read).rejects.toThrow(/data\/x\.lance: not a Lance data file/);
      await writeFile(join(root, "data", "y.lance"), Buffer.concat([new Uint8Array(100), v2Tail(50, 10_000, 60)]));
      await expect(readLanceDataFileFooter(new LocalStore(root), "data/y.lance")).rejects.toThrow(/column metadata start 10000 lies outside/);
    } finally {
      await removeDir(root);
    }
  });
});
