/**
 * The damage matrix on Delta tables written by Spark and Databricks (copies of ../shared/fixtures):
 * every role of file the latest version depends on (its newest commit, the checkpoint it is read
 * through, a part of a multi-part checkpoint, a V2 checkpoint's sidecar, a data file, a deletion
 * vector), each damage, one at a time. Versions whose log Delta keeps above its kept checkpoint
 * are not read: Delta's VACUUM keeps only the data of the latest snapshot and of the versions the
 * retention keeps, so time travel to them is not promised. The independent reader is DuckDB replaying the log
 * (test/formats/delta/duckdb-oracle.ts, skipping a checkpoint it cannot read as a tolerant reader
 * does), reading every live Parquet file whole, and checking every deletion vector's CRC as the
 * protocol defines it; none of it is lakewarden's code.
 */
import { copyFile, readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { oracleLiveFiles } from "../../formats/delta/duckdb-oracle.ts";
import { appendCommit, setAllTimes } from "../../formats/delta/log-surgery.ts";
import { DAMAGES, cleanDamaged, damageFile, deepProofFor, verdict } from "./damage.ts";
import type { Damage } from "./damage.ts";

const DAY = 86_400_000;

interface RoleCase {
  role: string;
  fixture: string;
  /** The file to damage, relative to the table root. */
  pick(dir: string): Promise<string>;
}

const logNames = async (dir: string) => (await readdir(join(dir, "_delta_log"))).sort();

const ROLES: RoleCase[] = [
  { role: "commit", fixture: "basic-dv-with-checkpoint", pick: async (dir) => `_delta_log/${(await logNames(dir)).filter((n) => /^\d{20}\.json$/.test(n)).at(-1)}` },
  {
    role: "checkpoint",
    fixture: "basic-dv-with-checkpoint",
    pick: async (dir) => `_delta_log/${(await logNames(dir)).filter((n) => /^\d{20}\.checkpoint\.parquet$/.test(n)).at(-1)}`,
  },
  {
    role: "checkpoint part",
    fixture: "multi-part-checkpoint",
    pick: async (dir) => `_delta_log/${(await logNames(dir)).find((n) => /\.checkpoint\.0000000001\.\d{10}\.parquet$/.test(n))}`,
  },
  {
    role: "sidecar",
    fixture: "checkpoint-v2-table",
    async pick(dir) {
      // A sidecar the newest V2 checkpoint names.
      const newest = (await logNames(dir)).filter((n) => /^\d{20}\.checkpoint\.[^.]+\.json$/.test(n)).at(-1)!;
      const lines = (await readFile(join(dir, "_delta_log", newest), "utf8")).split("\n").filter(Boolean);
      const sidecar = lines.map((line) => JSON.parse(line) as { sidecar?: { path: string } }).find((action) => action.sidecar)!;
      return `_delta_log/_sidecars/${sidecar.sidecar!.path}`;
    },
  },
  {
    role: "data",
    fixture: "basic-dv-with-checkpoint",
    // A data file only the newest commit adds (a copy of a live one under a new name, as an
    // append writes): a file older versions share is read by no proof (prove-kept.ts says why).
    async pick(dir) {
      const live = (await oracleLiveFiles(dir)).files[0]!;
      const path = "part-00009-lakewarden-damage-matrix-c000.snappy.parquet";
      await copyFile(join(dir, live.path), join(dir, path));
      const latest = Math.max(...(await logNames(dir)).filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20))));
      const { size } = await stat(join(dir, path));
      await appendCommit(dir, latest + 1, [{ add: { path, partitionValues: {}, size, modificationTime: Date.now(), dataChange: true } }]);
      await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
      return path;
    },
  },
  {
    role: "deletion vector",
    fixture: "basic-dv-with-checkpoint",
    pick: async (dir) => dvPath((await oracleLiveFiles(dir)).files.find((file) => file.dvId.startsWith("u"))!.dvId).path,
  },
];

/** What an independent reader makes of version `v`: its live files, their rows, each deletion vector checked; or why it cannot. */
async function readVersion(dir: string, version: number): Promise<string> {
  try {
    const { files } = await oracleLiveFiles(dir, version, { fallBack: true });
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      let rows = 0;
      for (const file of files) {
        const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${join(dir, file.path).replaceAll("'", "''")}')`);
        rows += Number((reader.getRowObjectsJson()[0] as { n: number }).n);
        if (file.dvId.startsWith("u")) await checkDeletionVector(dir, file.dvId);
      }
      return JSON.stringify({ files: files.map((file) => `${file.path}|${file.dvId}`), rows });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } catch (error) {
    return `unreadable: ${(error as Error).message.split("\n")[0]}`;
  }
}

/** A `u` deletion vector's file and offset (PROTOCOL.md: 20 Z85 characters hold a 16-byte UUID after an optional prefix). */
function dvPath(dvId: string): { path: string; offset: number } {
  const [body, at] = dvId.slice(1).split("@") as [string, string | undefined];
  const encoded = body.slice(-20);
  const prefix = body.slice(0, -20);
  const hex = Buffer.from(z85Decode(encoded)).toString("hex");
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { path: `${prefix ? `${prefix}/` : ""}deletion_vector_${uuid}.bin`, offset: Number(at ?? 1) };
}

const Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
function z85Decode(text: string): Uint8Array {
  const out = new Uint8Array((text.length / 5) * 4);
  for (let i = 0; i < text.length; i += 5) {
    let value = 0;
    for (let j = 0; j < 5; j++) value = value * 85 + Z85.indexOf(text[i + j]!);
    for (let j = 3; j >= 0; j--) {
      out[(i / 5) * 4 + j] = value & 0xff;
      value = Math.floor(value / 256);
    }
  }
  return out;
}

/** At the offset: a 4-byte big-endian size, the bitmap (magic 1681511377, little-endian), its CRC-32 big-endian. */
async function checkDeletionVector(dir: string, dvId: string): Promise<void> {
  const { path, offset } = dvPath(dvId);
  const bytes = await readFile(join(dir, path));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes[0] !== 1) throw new Error(`${path}: deletion vector file version ${bytes[0]}`);
  const size = view.getInt32(offset, false);
  if (offset + 4 + size + 4 > bytes.length) throw new Error(`${path}: deletion vector past the end of the file`);
  const bitmap = bytes.subarray(offset + 4, offset + 4 + size);
  if (view.getUint32(offset + 4, true) !== 1681511377) throw new Error(`${path}: no roaring magic`);
  if (crc32(bitmap) !== view.getUint32(offset + 4 + size, false)) throw new Error(`${path}: deletion vector CRC mismatch`);
}

describe("damage matrix: Delta (Spark and Databricks write, DuckDB reads)", () => {
  const cases = ROLES.flatMap((role) => DAMAGES.map((damage) => [role.role, damage, role] as [string, Damage, RoleCase]));
  it.each(cases)("%s %s: cleanup deletes nothing, or every version it keeps reads as before; the dry run says the same", async (_role, damage, roleCase) => {
    const dir = await copyFixture("delta", roleCase.fixture);
    await setAllTimes(dir, new Date(Date.now() - 400 * DAY));
    const target = await roleCase.pick(dir);
    const versions = (await logNames(dir)).filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20)));
    const before = new Map<number, string>();
    for (const version of versions) before.set(version, await readVersion(dir, version));
    await damageFile(join(dir, target), damage);
    // The log records every data file's size (`add.size`); a deletion vector's file has none of its own.
    const outcome = await cleanDamaged(dir, deltaFormat, deepProofFor(damage, roleCase.role === "data"));
    const problems = await verdict(
      outcome,
      async (kept) => {
        const differ: string[] = [];
        for (const version of kept) {
          const now = await readVersion(dir, version);
          if (now !== before.get(version)) differ.push(`kept version ${version} reads ${now.slice(0, 200)}, was ${before.get(version)?.slice(0, 80)}`);
        }
        return differ;
      },
      (reason) => !/log cleanup keeps it/.test(reason),
    );
    expect(problems, `${target} ${damage}; cleanup ${outcome.error ?? `deleted ${outcome.deleted.length}`}`).toEqual([]);
  });
});
