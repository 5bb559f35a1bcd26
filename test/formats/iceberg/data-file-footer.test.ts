/**
 * An Iceberg data file's Parquet footer for the head: one GET when it fits the 64 KiB probe, one
 * more for a larger one; the bytes are exactly the footer, its length and the magic.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readParquetFooter } from "../../../lib/formats/iceberg/data-file-footer.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lw-iceberg-footer-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file shaped like Parquet: magic, `body` bytes of "data", a footer of `footer` bytes, its length, magic. */
async function parquetShaped(name: string, body: number, footer: number): Promise<Uint8Array> {
  const metadata = new Uint8Array(footer).map((_, i) => (i * 7) % 251);
  const trailer = new Uint8Array(8);
  new DataView(trailer.buffer).setUint32(0, footer, true);
  trailer.set(new TextEncoder().encode("PAR1"), 4);
  const bytes = Buffer.concat([Buffer.from("PAR1"), Buffer.alloc(body, 1), metadata, trailer]);
  await writeFile(join(dir, name), bytes);
  return new Uint8Array(Buffer.concat([metadata, trailer]));
}

describe("iceberg readParquetFooter", () => {
  for (const [what, footer, gets] of [
    ["a footer within the probe", 1_253, 1],
    ["a footer larger than the probe", 100_000, 2],
  ] as const) {
    it(`${what}: ${gets} GET(s), the footer's bytes exactly`, async () => {
      const expected = await parquetShaped("f.parquet", 200_000, footer);
      const store = new LocalStore(dir);
      const read = await readParquetFooter(store, "f.parquet");
      expect(Buffer.from(read.bytes).equals(Buffer.from(expected))).toBe(true);
      expect(read.offset + read.bytes.length).toBe(read.fileSize);
      expect(store.stats.snapshot().get).toBe(gets);
    });
  }

  it("refuses a file without the magic at its end, naming it", async () => {
    await writeFile(join(dir, "bad.parquet"), Buffer.alloc(100, 2));
    await expect(readParquetFooter(new LocalStore(dir), "bad.parquet")).rejects.toThrow(/bad\.parquet.*no PAR1/);
  });
});
