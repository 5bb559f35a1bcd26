/**
 * checkpointProtection against its reference implementation: Spark with Delta makes a table the
 * way `ALTER TABLE ... DROP FEATURE` sets the feature (deletion vectors dropped, then V2
 * checkpoints, so the boundary moves and protocols differ on both sides of it), copies of it are
 * aged so log cleanup's cutoff falls above the boundary, below it at a classic checkpoint, below
 * it at a V2 checkpoint with sidecars, and below it with one `.crc` missing; lakewarden cleans
 * each copy, and Spark then lists each copy's history and time-travels to every version it lists,
 * which must read as it did before the cleanup. delta-rs's cleanup_metadata runs on a copy aged
 * like the partial case, and Spark reads what it left. `npm run test:peers` (not in `npm test`).
 */
import { cp, mkdtemp, readdir, rm, utimes, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { listKeys } from "../formats/delta/log-surgery.ts";
import { RESULTS_DIR, runPeerScript } from "./peer-scripts.ts";

interface Rows {
  rows: number;
  checksum: string;
}
interface SparkTable {
  events: { version: number; what: string; state?: { boundary: number } }[];
  final: { version: number; boundary: number };
}
interface SparkRead {
  history: number[];
  versions: Record<string, Rows | { error: string }>;
  error?: string;
}
interface DeltaRsRun {
  open: { ok?: number; error?: string };
  cleanup_metadata: { ok?: unknown; error?: string };
  vacuum_dry_run: { ok?: string[]; error?: string };
  read: { ok?: Record<string, Rows | { error: string }>; error?: string };
  log_deleted: string[];
}

const DAY_MS = 86_400_000;
const VERSION_PREFIX = /^(\d{20})\./;
let work = "";
let source = "";
let made: SparkTable;
const timings: Record<string, number> = {};

/** Log files (commits, checkpoints, .crc, sidecars) of versions up to `through` dated 40 days back, one second apart. */
async function ageLog(dir: string, through: number): Promise<void> {
  const base = Date.now() - 40 * DAY_MS;
  for (const folder of ["_delta_log", "_delta_log/_sidecars"]) {
    for (const name of await readdir(join(dir, folder))) {
      const m = VERSION_PREFIX.exec(name);
      if (!m || Number(m[1]) > through) continue;
      const time = new Date(base + Number(m[1]) * 1000);
      await utimes(join(dir, folder, name), time, time);
    }
  }
}

async function logKeys(dir: string): Promise<string[]> {
  return (await listKeys(join(dir, "_delta_log"))).filter((k) => !k.split("/").some((part) => part.startsWith(".")));
}

const versionOf = (key: string): number => Number(VERSION_PREFIX.exec(key.split("/").at(-1)!)?.[1] ?? -1);
const commitVersions = (keys: readonly string[]): number[] =>
  keys
    .filter((k) => /^\d{20}\.json$/.test(k))
    .map(versionOf)
    .sort((a, b) => a - b);
const checkpointVersions = (keys: readonly string[]): number[] => [...new Set(keys.filter((k) => /^\d{20}\.checkpoint\./.test(k)).map(versionOf))].sort((a, b) => a - b);

async function lakewardenCleanup(dir: string): Promise<{ code: number; report: Record<string, unknown> | null; stderr: string }> {
  const io = new BufferIO();
  const code = await runCli(["cleanup", dir, "--json"], io);
  return { code, report: io.stdout ? (JSON.parse(io.stdout) as Record<string, unknown>) : null, stderr: io.stderr };
}

interface Scenario {
  name: string;
  /** Log files up to this version are older than the table's 30-day log retention. */
  agedThrough: number;
  /** A `.crc` removed before the cleanup (its version's protocol unknown). */
  dropCrc?: number;
  /** The first commit that must remain; every log file below it goes, except checkpoints below V in a partial cleanup. */
  firstKept: number;
  /** The cleanup is partial below V: checkpoints below V stay. */
  partial: boolean;
}

interface Outcome {
  scenario: Scenario;
  dir: string;
  before: string[];
  afterFirst: string[];
  afterSecond: string[];
  protection: unknown;
}
const outcomes: Outcome[] = [];
let deltaRs: { dir: string; run: DeltaRsRun; before: string[] } | null = null;
/** Spark's read of each copy, by its folder. */
const spark = new Map<string, SparkRead>();

describe("checkpointProtection: lakewarden's log cleanup on tables Spark made, read back by Spark", () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "lw-peers-cp-"));
    source = join(work, "spark-made");
    const make = await runPeerScript<SparkTable>("spark_delta.py", ["make", source], 1_800_000);
    made = make.result;
    timings["spark make (one JVM)"] = make.seconds;
  }, 1_860_000);

  afterAll(async () => {
    await mkdir(RESULTS_DIR, { recursive: true });
    const summary = {
      boundary: made?.final.boundary,
      latest: made?.final.version,
      timings,
      scenarios: outcomes.map((o) => ({
        ...o.scenario,
        deleted_first_run: o.before.filter((k) => !o.afterFirst.includes(k)).length,
        deleted_second_run: o.afterFirst.filter((k) => !o.afterSecond.includes(k)).length,
        commits_left: commitVersions(o.afterSecond),
        checkpoints_left: checkpointVersions(o.afterSecond),
        protection: o.protection,
        spark_history: spark.get(o.dir)?.history,
      })),
      delta_rs: deltaRs && {
        cleanup_metadata: deltaRs.run.cleanup_metadata,
        deleted: deltaRs.run.log_deleted,
        commits_left: commitVersions(deltaRs.before.filter((k) => !deltaRs!.run.log_deleted.includes(`_delta_log/${k}`))),
        checkpoints_left: checkpointVersions(deltaRs.before.filter((k) => !deltaRs!.run.log_deleted.includes(`_delta_log/${k}`))),
        reads: deltaRs.run.read,
        spark_after: spark.get(deltaRs.dir),
      },
    };
    await writeFile(join(RESULTS_DIR, "checkpoint-protection.json"), `${JSON.stringify(summary, null, 2)}\n`);
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("Spark made the boundary the way DROP FEATURE sets it, with protocols differing on both sides", () => {
    const drops = made.events.filter((e) => e.what.startsWith("drop feature"));
    expect(drops.map((d) => d.state?.boundary)).toEqual(drops.map((d) => d.version));
    expect(made.final.boundary).toBe(drops.at(-1)!.version);
    expect(made.final.boundary).toBeLessThan(made.final.version - 2);
  });

  it("cleans every aged copy: all history below the boundary in one run, a partial run only with every protocol known, or nothing", async () => {
    const V = made.final.boundary;
    const keys = await logKeys(source);
    const checkpoints = checkpointVersions(keys);
    const uuidCheckpoints = checkpointVersions(keys.filter((k) => /checkpoint\.[0-9a-f-]{36}\.(json|parquet)$/.test(k)));
    const above = Math.max(...checkpoints.filter((c) => c >= V && c < made.final.version));
    const below = Math.max(...checkpoints.filter((c) => c < V));
    const belowV2 = Math.max(...uuidCheckpoints.filter((c) => c < V));
    const scenarios: Scenario[] = [
      { name: "cutoff above the boundary", agedThrough: above, firstKept: above, partial: false },
      { name: "cutoff below the boundary, classic checkpoint", agedThrough: below, firstKept: below, partial: true },
      { name: "cutoff below the boundary, V2 checkpoint with sidecars", agedThrough: belowV2, firstKept: belowV2, partial: true },
      { name: "cutoff below the boundary, one .crc missing", agedThrough: below, dropCrc: Math.floor(below / 2), firstKept: 0, partial: true },
    ];
    for (const [i, scenario] of scenarios.entries()) {
      const dir = join(work, `lakewarden-${i}`);
      await cp(source, dir, { recursive: true });
      if (scenario.dropCrc !== undefined) await rm(join(dir, "_delta_log", `${String(scenario.dropCrc).padStart(20, "0")}.crc`));
      await ageLog(dir, scenario.agedThrough);
      const before = await logKeys(dir);
      const started = Date.now();
      const first = await lakewardenCleanup(dir);
      timings[`lakewarden cleanup: ${scenario.name}`] = (Date.now() - started) / 1000;
      expect(first.code, first.stderr).toBe(0);
      const afterFirst = await logKeys(dir);
      const second = await lakewardenCleanup(dir);
      expect(second.code, second.stderr).toBe(0);
      const afterSecond = await logKeys(dir);
      outcomes.push({ scenario, dir, before, afterFirst, afterSecond, protection: first.report?.protection ?? null });

      // All of it in the first run: the second finds nothing more in the log.
      expect(afterSecond, scenario.name).toEqual(afterFirst);
      const gone = before.filter((k) => !afterFirst.includes(k));
      expect(commitVersions(afterFirst)[0], scenario.name).toBe(scenario.firstKept);
      // Commits and .crc files below the kept checkpoint go, nothing at or above it does.
      for (const key of before) {
        const v = versionOf(key);
        if (key.startsWith("_sidecars/") || !/^\d{20}\.(json|crc)$/.test(key)) continue;
        expect(gone.includes(key), `${scenario.name}: ${key}`).toBe(v < scenario.firstKept);
      }
      // Checkpoints below V survive a partial cleanup; a whole one takes every checkpoint below the kept one.
      const checkpointsLeft = checkpointVersions(afterFirst);
      const expectedCheckpoints = checkpoints.filter((c) => c >= scenario.firstKept || (scenario.partial && c < V));
      expect(checkpointsLeft, scenario.name).toEqual(expectedCheckpoints);
      if (scenario.dropCrc !== undefined) expect(gone, scenario.name).toEqual([]);
    }
  });

  it("runs delta-rs's cleanup_metadata and VACUUM on a copy aged like the partial case", async () => {
    const dir = join(work, "delta-rs");
    await cp(source, dir, { recursive: true });
    const below = outcomes[1]!.scenario.agedThrough;
    await ageLog(dir, below);
    const before = await logKeys(dir);
    const run = await runPeerScript<DeltaRsRun>("deltars_peer.py", ["maintain", dir], 300_000);
    timings["delta-rs open, read, vacuum dry run, cleanup_metadata"] = run.seconds;
    deltaRs = { dir, run: run.result, before };
    expect(run.result.open.ok).toBe(made.final.version);
  });

  it("Spark lists each cleaned copy's history and reads every version it lists as it read them before the cleanup", async () => {
    // One JVM: the untouched table (the rows every version had) from the oldest version any copy
    // keeps, each copy's kept versions, the refused copy's history and latest (its log is as made:
    // the listing above proves it), and whatever delta-rs left.
    const latest = made.final.version;
    const kept = outcomes.filter((o) => o.scenario.dropCrc === undefined);
    const from = (dir: string): number =>
      dir === source ? Math.min(...kept.map((o) => o.scenario.firstKept)) : outcomes.find((o) => o.dir === dir)?.scenario.dropCrc !== undefined ? latest : 0;
    const dirs = [source, ...outcomes.map((o) => o.dir), ...(deltaRs ? [deltaRs.dir] : [])];
    const read = await runPeerScript<Record<string, SparkRead>>("spark_delta.py", ["read", ...dirs.map((d) => `${d}@${from(d)}`)], 1_500_000);
    timings["spark read of every copy (one JVM)"] = read.seconds;
    for (const dir of dirs) spark.set(dir, read.result[`${dir}@${from(dir)}`]!);
    const baseline = spark.get(source)!;
    expect(baseline.history).toEqual(Array.from({ length: latest + 1 }, (_, i) => i));
    for (const outcome of outcomes) {
      const got = spark.get(outcome.dir)!;
      expect(got.error, outcome.scenario.name).toBeUndefined();
      expect(got.history, outcome.scenario.name).toEqual(baseline.history.filter((v) => v >= outcome.scenario.firstKept));
      const readFrom = from(outcome.dir);
      for (const v of got.history.filter((v) => v >= readFrom)) {
        expect(got.versions[String(v)], `${outcome.scenario.name}: version ${v}`).toEqual(baseline.versions[String(v)]);
        expect(baseline.versions[String(v)]).toHaveProperty("rows");
      }
    }
  }, 1_560_000);
});
