/**
 * The damage matrix on an Iceberg table written by Spark (a copy of ../shared/fixtures' bunnies
 * with three more snapshots): every role of file the current snapshot depends on (the current
 * metadata file, its manifest list, a manifest, and a data file and a position delete file that no
 * expired snapshot names: see prove-kept.ts for why shared data files are not read), each damage,
 * one at a time. The independent reader is icebird (metadata, manifest list, manifests) and
 * DuckDB (every live data and delete file read whole); none of it is lakewarden's code.
 */
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { copyIcebergFixture, fileExists, icebirdLiveFiles, icebirdMetadataFiles, snapshotsByTextPass } from "../../support/iceberg-fixtures.ts";
import { buildHistory, currentMetadataName } from "../../support/iceberg-histories.ts";
import { DAMAGES, cleanDamaged, damageFile, deepProofFor, verdict } from "./damage.ts";
import type { Damage } from "./damage.ts";

const DAY = 86_400_000;
const NOW = Date.now();
const ROLES = ["metadata", "manifest list", "manifest", "data", "position deletes"] as const;
type Role = (typeof ROLES)[number];

/** What the independent readers make of each snapshot of the current metadata, by snapshot id. */
async function readSnapshots(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let metadata: string;
  let snapshots: { id: string }[];
  try {
    metadata = await currentMetadataName(dir);
    snapshots = await snapshotsByTextPass(join(dir, "metadata", metadata));
  } catch (error) {
    out.set("*", `unreadable: ${(error as Error).message}`);
    return out;
  }
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    for (let i = 0; i < snapshots.length; i++) {
      try {
        const metadataFiles = await icebirdMetadataFiles(dir, metadata, i);
        const live = await icebirdLiveFiles(dir, metadata, i);
        let rows = 0;
        for (const key of [...metadataFiles, ...live.map((file) => file.key)]) if (!(await fileExists(dir, key))) throw new Error(`${key} does not exist`);
        for (const file of live) {
          const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${join(dir, file.key).replaceAll("'", "''")}')`);
          rows += Number((reader.getRowObjectsJson()[0] as { n: number }).n);
        }
        out.set(snapshots[i]!.id, JSON.stringify({ files: live.map((file) => `${file.key}|${file.content}`), rows }));
      } catch (error) {
        out.set(snapshots[i]!.id, `unreadable: ${(error as Error).message.split("\n")[0]}`);
      }
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return out;
}

/** The file of `role` the current snapshot depends on. */
async function fileOf(dir: string, role: Role): Promise<string> {
  const metadata = await currentMetadataName(dir);
  if (role === "metadata") return `metadata/${metadata}`;
  const snapshots = await snapshotsByTextPass(join(dir, "metadata", metadata));
  const current = snapshots.length - 1;
  const [list, ...manifests] = await icebirdMetadataFiles(dir, metadata, current);
  if (role === "manifest list") return list!;
  if (role === "manifest") return manifests[0]!;
  const live = await icebirdLiveFiles(dir, metadata, current);
  // Files no expired snapshot names: the newest commit's data file, and the position deletes (only s1 expires).
  const file = live.find((f) => (role === "data" ? f.content === 0 && f.key.startsWith("data/c-") : f.content === 1));
  if (!file) throw new Error(`the test table's current snapshot has no ${role} file`);
  return file.key;
}

describe("damage matrix: Iceberg (Spark writes, icebird and DuckDB read)", () => {
  const cases = ROLES.flatMap((role) => DAMAGES.map((damage) => [role, damage] as [Role, Damage]));
  it.each(cases)("%s %s: cleanup deletes nothing, or every snapshot it keeps reads as before; the dry run says the same", async (role, damage) => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY });
    try {
      // s1 ← s2 ← s3 (30 days old) ← a (9 days) ← b (8 days) ← c (1 hour), keeping the newest five: s1 expires.
      const history = {
        commits: [
          { name: "a", ageMs: 9 * DAY },
          { name: "b", ageMs: 8 * DAY },
          { name: "c", ageMs: 3_600_000 },
        ],
        properties: { "history.expire.min-snapshots-to-keep": "5" },
      };
      await buildHistory(copy.dir, history, NOW);
      const before = await readSnapshots(copy.dir);
      const target = await fileOf(copy.dir, role);
      await damageFile(join(copy.dir, target), damage);
      // Manifests record every data and delete file's size (`file_size_in_bytes`).
      const outcome = await cleanDamaged(copy.dir, icebergFormat, { now: () => new Date(NOW), ...deepProofFor(damage, role === "data" || role === "position deletes") });
      const problems = await verdict(outcome, async () => {
        const after = await readSnapshots(copy.dir);
        return [...after]
          .filter(([id, read]) => read !== before.get(id))
          .map(([id, read]) => `kept snapshot ${id} reads ${read.slice(0, 160)}, was ${before.get(id)?.slice(0, 80)}`);
      });
      expect(problems, `${target} ${damage}; cleanup ${outcome.error ?? `deleted ${outcome.deleted.length}`}`).toEqual([]);
    } finally {
      await copy.remove();
    }
  });
});
