/**
 * A listing with several pages in flight (lib/maintenance/ranged-listing.ts) lists exactly what
 * one listing does: the same objects in the same order, each once, from any start, in folders
 * whose names are binary digits (Lance's data files), partitions (`p=12/part-...`), hex, and keys
 * that are exactly where it cuts, on local disk and on S3 (moto's server: S3's own `StartAfter`
 * and `MaxKeys`); and it waits for far fewer pages one after another.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cutsBetween, listRanged } from "../../lib/maintenance/ranged-listing.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { startMotoServer } from "../support/moto.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { longestChain, recordRequests } from "../support/request-chain.ts";

const PAGE = 50;
let root = "";

const binary = (n: number) => Array.from(randomBytes(n), (b) => String(b & 1)).join("");
const KEYS = [
  ...Array.from({ length: 1200 }, () => `data/${binary(20)}${randomBytes(6).toString("hex")}.lance`),
  // Keys that are exactly where cuts of binary names fall.
  "data/0",
  "data/01",
  "data/1",
  "data/10",
  "data/11",
  ...Array.from({ length: 600 }, (_, i) => `p=${i % 150}/part-${String(i).padStart(5, "0")}-${randomBytes(4).toString("hex")}.parquet`),
  ...Array.from({ length: 400 }, () => `h/${randomBytes(8).toString("hex")}`),
];

beforeAll(async () => {
  root = await makeTempDir("lw-ranged-listing-");
  await Promise.all(
    [...new Set(KEYS)].map(async (key) => {
      await mkdir(dirname(join(root, key)), { recursive: true });
      await writeFile(join(root, key), "x");
    }),
  );
});
afterAll(() => removeDir(root));

async function keysOf(listing: AsyncIterable<{ key: string }>): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of listing) keys.push(object.key);
  return keys;
}

describe("a listing with several pages in flight", () => {
  it("lists what one listing lists, in its order, from any start", async () => {
    const store = new LocalStore(root);
    for (const prefix of ["data/", "", "h/", "p=1", "nothing/"]) {
      const all = await keysOf(store.list(prefix));
      const starts = [null, all[0] ?? null, all[Math.floor(all.length / 2)] ?? null, all.at(-2) ?? null, `${prefix}0`, `${prefix}1`, `${prefix}~`];
      for (const after of starts) {
        const expected = await keysOf(store.list(prefix, after !== null ? { startAfter: after } : {}));
        expect(await keysOf(listRanged(store, prefix, after, { pageSize: PAGE })), `${prefix} after ${after}`).toEqual(expected);
      }
    }
  });

  it("on S3 lists what one listing lists", async () => {
    const moto = await startMotoServer({ buckets: ["ranged"] });
    try {
      const store = openStore("s3://ranged/t", { s3: { endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials } });
      const keys = [...new Set(KEYS.filter((_, i) => i % 4 === 0 || KEYS[i]!.length < 9))];
      for (let i = 0; i < keys.length; i += 32) await Promise.all(keys.slice(i, i + 32).map((key) => store.put(key, new Uint8Array([1]))));
      for (const prefix of ["data/", ""]) {
        const all = await keysOf(store.list(prefix));
        expect(all.length).toBeGreaterThan(PAGE * 2);
        for (const after of [null, all[Math.floor(all.length / 3)]!]) {
          const expected = await keysOf(store.list(prefix, after !== null ? { startAfter: after } : {}));
          expect(await keysOf(listRanged(store, prefix, after, { pageSize: PAGE })), `${prefix} after ${after}`).toEqual(expected);
        }
      }
    } finally {
      await moto.stop();
    }
  });

  it("waits for fewer pages one after another", async () => {
    const plain = new LocalStore(root);
    const plainRequests = recordRequests(plain, 2);
    const expected = await keysOf(plain.list("data/", { maxKeys: Number.POSITIVE_INFINITY }));
    // One listing, page by page, as S3 answers it.
    let after: string | null = null;
    const paged: string[] = [];
    for (;;) {
      const page = await keysOf(plain.list("data/", { ...(after !== null ? { startAfter: after } : {}), maxKeys: PAGE }));
      paged.push(...page);
      if (page.length < PAGE) break;
      after = page.at(-1)!;
    }
    expect(paged).toEqual(expected);
    const sequential = longestChain(plainRequests.slice(1)).length;

    const ranged = new LocalStore(root);
    const rangedRequests = recordRequests(ranged, 2);
    expect(await keysOf(listRanged(ranged, "data/", null, { pageSize: PAGE }))).toEqual(expected);
    const chain = longestChain(rangedRequests).length;
    expect(sequential).toBeGreaterThanOrEqual(Math.ceil(expected.length / PAGE));
    expect(chain, `${rangedRequests.length} requests`).toBeLessThanOrEqual(Math.ceil(sequential / 2));
  });

  it("cuts between two keys at the characters the keys use, never outside them", () => {
    const objects = ["data/0010", "data/0011", "data/0100"].map((key) => ({ key, size: 1, etag: "", lastModified: new Date(0) }));
    expect(cutsBetween("data/", "data/0100", null, objects, 15)).toEqual(["data/011", "data/1"]);
    expect(cutsBetween("data/", "data/0100", "data/1", objects, 15)).toEqual(["data/011"]);
    expect(cutsBetween("data/", "data/0100", null, objects, 1)).toEqual(["data/1"]);
    expect(cutsBetween("data/", "data/0100", null, objects, 0)).toEqual([]);
  });
});
