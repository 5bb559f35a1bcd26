/**
 * Iceberg parity, file by file: iceberg-core 1.10.0's ExpireSnapshots (the table's own retention,
 * per-ref max-ref-age-ms / max-snapshot-age-ms / min-snapshots-to-keep, tags and branches; or an
 * explicit expireOlderThan + retainLast) followed by the orphan removal Spark's DeleteOrphanFiles
 * does (iceberg-core's reachable-file set held against the listing, files older than 3 days), run
 * by IcebergPeer.java in one JVM for the whole file, against lakewarden's cleanup on another copy
 * of the same table. Compared: the snapshots each expired and the files each deleted; lakewarden's
 * copy must read whole afterwards (icebird: every remaining snapshot's files exist). The tables:
 * the shared Iceberg fixtures (Spark, Athena, BigQuery writers; two of them broken) and histories
 * with tags and branches built on the spark-bunnies copy. Results in .tools/peers-results/.
 */
import { cp, mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { DAY_MS } from "../../lib/formats/iceberg/retention.ts";
import { copyIcebergFixture, type FixtureCopy, fileExists, ICEBERG_FIXTURES, type IcebergFixture, listFiles, snapshotsByTextPass } from "../support/iceberg-fixtures.ts";
import { buildHistory, currentMetadataName, type History, reach } from "../support/iceberg-histories.ts";
import { icebergRestClassPath } from "../tools/iceberg-rest-env.ts";
import { toolPython } from "../tools/python-env.ts";
import { REPO_ROOT, RESULTS_DIR, runNiced } from "./peer-scripts.ts";

const NOW = Date.now();
const HOUR = 3600_000;

interface Case {
  name: string;
  /** A shared fixture, or a table pyiceberg writes at test time (test/engines/iceberg_table.py, catalog-less). */
  fixture: IcebergFixture | "pyiceberg";
  history?: History;
  /** lakewarden's explicit flags and the peer's explicit expireOlderThan / retainLast (the same values). */
  explicit?: { olderThanMs: number; retainLast: number };
  /**
   * What docs/peers.md says of the case: both expire and delete the same; lakewarden refuses the
   * table and deletes nothing (a broken or unreadable table); lakewarden keeps a subset (stricter).
   */
  outcome: "same" | "lakewarden refuses" | "lakewarden keeps more";
}

/** The fixtures lakewarden refuses: a missing manifest list, paths outside the table, data files shorter than their manifests say. */
const REFUSED: readonly IcebergFixture[] = ["equality_deletes-mytable", "big_query_error", "hive_partitioned_table"];

const HISTORIES: { name: string; history: History }[] = [
  {
    name: "main, the table's defaults (5 days, keep 1)",
    history: {
      commits: [
        { name: "a", ageMs: 2 * DAY_MS },
        { name: "b", ageMs: HOUR },
      ],
    },
  },
  {
    name: "main, history.expire.min-snapshots-to-keep=3",
    history: {
      commits: [
        { name: "a", ageMs: 9 * DAY_MS },
        { name: "b", ageMs: 8 * DAY_MS },
      ],
      properties: { "history.expire.min-snapshots-to-keep": "3" },
    },
  },
  {
    name: "a branch with its own max-snapshot-age-ms",
    history: {
      commits: [
        { name: "c1", ageMs: 8 * DAY_MS, branch: "audit", parent: "@s2", refs: { audit: { type: "branch", "max-snapshot-age-ms": 9 * DAY_MS } } },
        { name: "c2", ageMs: 6 * DAY_MS, branch: "audit" },
      ],
    },
  },
  {
    name: "a branch with min-snapshots-to-keep=3 reaching into main's history",
    history: {
      commits: [
        { name: "c1", ageMs: 10 * DAY_MS, branch: "audit", parent: "@s2", refs: { audit: { type: "branch", "min-snapshots-to-keep": 3 } } },
        { name: "c2", ageMs: 8 * DAY_MS, branch: "audit" },
      ],
    },
  },
  {
    name: "tags kept; a tag and a branch past max-ref-age-ms dropped",
    history: {
      commits: [
        { name: "x1", ageMs: 7 * DAY_MS, branch: "stale", parent: "@s3", refs: { stale: { type: "branch", "max-ref-age-ms": 2 * DAY_MS } } },
        { name: "x2", ageMs: 3 * DAY_MS, branch: "stale" },
      ],
      refs: { first: { "snapshot-id": "@s1", type: "tag" }, old: { "snapshot-id": "@s2", type: "tag", "max-ref-age-ms": DAY_MS } },
    },
  },
  {
    name: "main's max-ref-age-ms is ignored; a tag on its head past the table's max-ref-age-ms is dropped",
    history: {
      commits: [],
      refs: { main: { "snapshot-id": "@s3", type: "branch", "max-ref-age-ms": 1 }, head: { "snapshot-id": "@s3", type: "tag" } },
      properties: { "history.expire.max-ref-age-ms": "1000" },
    },
  },
];

const CASES: Case[] = [
  ...ICEBERG_FIXTURES.map((fixture): Case => ({ name: `fixture ${fixture}`, fixture, outcome: REFUSED.includes(fixture) ? "lakewarden refuses" : "same" })),
  ...HISTORIES.map(({ name, history }): Case => ({ name, fixture: "spark-bunnies", history, outcome: "same" })),
  {
    name: "pyiceberg 0.12, 15 commits: appends, deletes, overwrites, schema and partition evolution, tags (one by max-ref-age-ms), a branch",
    fixture: "pyiceberg",
    outcome: "same",
  },
  {
    name: "explicit expireOlderThan 1 hour + retainLast 1 (lakewarden: --older-than 1h --retain-versions 1)",
    fixture: "spark-bunnies",
    history: {
      commits: [
        { name: "a", ageMs: 2 * DAY_MS },
        { name: "b", ageMs: 2 * HOUR },
        { name: "c", ageMs: HOUR / 2 },
      ],
    },
    explicit: { olderThanMs: HOUR, retainLast: 1 },
    outcome: "lakewarden keeps more",
  },
];

interface PeerResult {
  id: string;
  error?: string;
  snapshots_before?: string[];
  expired?: string[];
  expire_deleted?: string[];
  orphans?: string[];
  peer_written?: string[];
  refs_after?: Record<string, string>;
}

interface Prepared {
  c: Case;
  ours: FixtureCopy;
  theirs: FixtureCopy;
  before: string[];
  snapshotsBefore: string[];
  peer?: PeerResult;
}

const copies: FixtureCopy[] = [];
const prepared: Prepared[] = [];
const rows: Record<string, unknown>[] = [];
let scratch = "";

const CLASSES_DIR = join(REPO_ROOT, ".tools", "iceberg-peer", "classes");

/** Runs `cmd args` under nice in its own process group (killed with it); resolves with stdout. */
function run(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return runNiced(cmd, cmd, args, timeoutMs);
}

async function metadataOf(dir: string): Promise<string> {
  try {
    return await currentMetadataName(dir);
  } catch {
    // catalog-named metadata (Athena, BigQuery): the newest by name
    const names = (await listFiles(dir, "metadata")).map((k) => k.slice("metadata/".length)).filter((n) => n.endsWith(".metadata.json"));
    return names.sort().at(-1)!;
  }
}

async function snapshotIds(dir: string, metadata: string): Promise<string[]> {
  return (await snapshotsByTextPass(join(dir, "metadata", metadata)).catch(() => [])).map((s) => s.id).sort();
}

/**
 * A table pyiceberg writes now (its retention: history.expire.max-snapshot-age-ms 2 s, keep 1),
 * every file then dated 30 days back, once its snapshots are past the 2 seconds.
 */
async function pyicebergTable(): Promise<FixtureCopy> {
  const parent = await mkdtemp(join(tmpdir(), "lw-iceberg-peer-pyiceberg-"));
  const dir = join(parent, "t");
  await run(toolPython(), [join(REPO_ROOT, "test", "engines", "iceberg_table.py"), "write", dir, "--state", join(parent, "state.json"), "--commits", "15"], 300_000);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const when = new Date(Date.now() - 30 * DAY_MS);
  for (const key of await listFiles(dir)) await utimes(join(dir, key), when, when);
  return { dir, remove: () => rm(parent, { recursive: true, force: true }) };
}

/** Every snapshot of the current (or catalog-named newest) metadata reads with icebird, and every file it names exists. */
async function everyRemainingSnapshotReads(dir: string): Promise<void> {
  const metadata = await metadataOf(dir);
  const snapshots = await snapshotsByTextPass(join(dir, "metadata", metadata));
  for (let i = 0; i < snapshots.length; i++) {
    for (const key of await reach(dir, metadata, i)) expect(await fileExists(dir, key), `${key} (snapshot ${snapshots[i]!.id})`).toBe(true);
  }
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "lw-iceberg-peer-"));
  for (const c of CASES) {
    // One copy gets the history (random snapshot ids and file names); the other is a copy of it, dates kept.
    const ours = c.fixture === "pyiceberg" ? await pyicebergTable() : await copyIcebergFixture(c.fixture);
    if (c.history) await buildHistory(ours.dir, c.history, NOW);
    const theirsParent = await mkdtemp(join(tmpdir(), `lw-iceberg-peer-${c.fixture}-`));
    const theirs: FixtureCopy = { dir: join(theirsParent, basename(ours.dir)), remove: () => rm(theirsParent, { recursive: true, force: true }) };
    await cp(ours.dir, theirs.dir, { recursive: true, preserveTimestamps: true });
    copies.push(ours, theirs);
    const metadata = await metadataOf(ours.dir);
    prepared.push({ c, ours, theirs, before: await listFiles(ours.dir), snapshotsBefore: await snapshotIds(ours.dir, metadata) });
  }
  const jobs = await Promise.all(
    prepared.map(async (p, i) => ({
      id: String(i),
      dir: p.theirs.dir,
      metadata: await metadataOf(p.theirs.dir),
      orphanOlderThanMs: Date.now() - 3 * DAY_MS,
      ...(p.c.explicit ? { expireOlderThanMs: Date.now() - p.c.explicit.olderThanMs, retainLast: p.c.explicit.retainLast } : {}),
    })),
  );
  const jobsFile = join(scratch, "jobs.json");
  await writeFile(jobsFile, JSON.stringify(jobs));
  await mkdir(CLASSES_DIR, { recursive: true });
  const classPath = icebergRestClassPath();
  await run("javac", ["-d", CLASSES_DIR, "-cp", classPath, join(REPO_ROOT, "test", "peers", "IcebergPeer.java")], 300_000);
  const results = JSON.parse(await run("java", ["-Xmx512m", "-cp", `${CLASSES_DIR}:${classPath}`, "IcebergPeer", jobsFile], 900_000)) as PeerResult[];
  for (const result of results) prepared[Number(result.id)]!.peer = result;
}, 1_200_000);

afterAll(async () => {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, "iceberg-parity.json"), `${JSON.stringify(rows, null, 2)}\n`);
  await Promise.all(copies.map((c) => c.remove()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("Iceberg parity with iceberg-core: ExpireSnapshots + orphan removal against lakewarden's cleanup", () => {
  it.each(CASES.map((c, i) => [c.name, i] as const))("%s", async (_name, i) => {
    const p = prepared[i]!;
    const peer = p.peer!;
    const io = new BufferIO();
    const flags = p.c.explicit ? ["--older-than", `${p.c.explicit.olderThanMs / HOUR}h`, "--retain-versions", String(p.c.explicit.retainLast), "--allow-short-retention"] : [];
    // A catalog-named table (Athena): the catalog's current metadata file, as the peer's catalog registers it.
    const metadata = await metadataOf(p.ours.dir);
    if (!/^v\d+\.metadata\.json$/.test(metadata)) flags.push("--metadata-location", `metadata/${metadata}`);
    const exit = await runCli(["cleanup", p.ours.dir, "--json", ...flags], io);
    const after = new Set(await listFiles(p.ours.dir));
    const oursDeleted = p.before.filter((k) => !after.has(k));
    const remaining = new Set(exit === 0 ? await snapshotIds(p.ours.dir, await metadataOf(p.ours.dir)) : p.snapshotsBefore);
    const oursExpired = p.snapshotsBefore.filter((id) => !remaining.has(id));
    const theirsDeleted = [...(peer.expire_deleted ?? []), ...(peer.orphans ?? [])];
    const theirsSet = new Set(theirsDeleted);
    const oursSet = new Set(oursDeleted);
    const row = {
      case: p.c.name,
      lakewarden: { exit, ...(exit === 0 ? {} : { error: io.stderr.trim().split("\n")[0] }), expired: oursExpired, deleted: oursDeleted.length },
      iceberg_core: { ...(peer.error ? { error: peer.error } : {}), expired: peer.expired ?? [], deleted: theirsDeleted.length, refs_after: peer.refs_after },
      same_expired: JSON.stringify(oursExpired) === JSON.stringify(peer.expired ?? []),
      only_lakewarden: oursDeleted.filter((k) => !theirsSet.has(k)),
      only_iceberg_core: theirsDeleted.filter((k) => !oursSet.has(k)),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
    // lakewarden's copy reads whole afterwards, whatever it deleted or refused.
    if (exit === 0) await everyRemainingSnapshotReads(p.ours.dir);
    if (p.c.outcome === "same") {
      expect(exit, io.stderr).toBe(0);
      expect(peer.error).toBeUndefined();
      expect(oursExpired).toEqual(peer.expired);
      expect(oursDeleted.sort()).toEqual(theirsDeleted.sort());
    } else if (p.c.outcome === "lakewarden refuses") {
      expect(exit).not.toBe(0);
      expect(oursDeleted).toEqual([]);
    } else {
      expect(exit, io.stderr).toBe(0);
      expect(row.only_lakewarden).toEqual([]);
      expect(oursExpired.filter((id) => !(peer.expired ?? []).includes(id))).toEqual([]);
      expect(oursExpired.length).toBeLessThan((peer.expired ?? []).length);
    }
  });
});
