/**
 * Writers racing maintenance: a real engine (delta-rs, pyiceberg, Lance from Python; the scripts
 * beside this file) commits to a table in a child process while lakewarden's cleanup and head
 * writes run on the same table, round after round. After every round the engine's own reader
 * reads the latest version and every version `lakewarden versions` lists as live, by the
 * engine's time travel, and must get exactly the rows the writer says it wrote there; every
 * version the writer made that is no longer live must still be listed, as cleaned up.
 *
 * Used by the short tests (race-*.test.ts) and the soak (bench/soak/engines.ts).
 */
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BufferIO } from "../../lib/cli/io.ts";
import { runCli } from "../../lib/cli/run-cli.ts";
import { toolPython } from "../tools/python-env.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));

/** One engine's script and the table it writes. */
export interface EngineTable {
  /** The format's name, as lakewarden says it. */
  format: "delta" | "iceberg" | "lance";
  /** What the figures call it ("delta-rs", "pyiceberg (SQL catalog)", ...). */
  label: string;
  /** The script under test/engines/. */
  script: string;
  /** The table's location (a local path, or s3://... when the environment names an endpoint). */
  uri: string;
  /** Extra arguments of both the writer and the reader (the Iceberg SQL catalog's file). */
  scriptArgs?: string[];
  /** The `--metadata-location` lakewarden must be given right now (a catalog's pointer), if any. */
  metadataLocation?: () => string | null;
  /**
   * Delta: VACUUM (the table's deletedFileRetentionDuration) takes the data of versions whose
   * commits log cleanup keeps (logRetentionDuration, cut off at the start of a day), and
   * `lakewarden versions` still lists those versions as live. Such a version the engine cannot
   * read is counted as `listedButVacuumed`, not as a broken promise, when it is older than the
   * newest `retainVersions` (which cleanup keeps readable, data and log). See delta-listing.test.ts.
   */
  listsVacuumedVersions?: boolean;
}

export interface RaceOptions {
  rounds: number;
  commitsPerRound: number;
  /** lakewarden cleanup's flags (retention, safety window and their acknowledgements). */
  cleanupFlags: string[];
  /** The --retain-versions among them: the newest this many live versions must always read back. */
  retainVersions: number;
  /** Where the writer's state file goes (outside the table). */
  workDir: string;
  /** Wait this long after the writer's round before the cleanup with the writer quiet (default none). */
  settleMs?: number;
  /** Pause between maintenance runs while the writer commits (default 300 ms). */
  pauseMs?: number;
  /** Environment of the writer and reader (AWS_ENDPOINT_URL for S3). */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface RaceFigures {
  label: string;
  rounds: number;
  /** Versions the writer made. */
  commits: number;
  /** Cleanup runs that completed, during the writer's commits and after them. */
  cleanups: number;
  cleanupsDuringWrites: number;
  headWrites: number;
  versionsRemoved: number;
  filesDeleted: number;
  bytesDeleted: number;
  /** Kept versions read back with rows other than the writer's (or the latest version so read): each one is rows lost. */
  rowsLost: number;
  /** Kept versions the engine's reader could not read. */
  unreadableKept: number;
  /** Delta versions listed live whose data VACUUM took (listsVacuumedVersions): the engine cannot read them. */
  listedButVacuumed: number;
  /** Versions `versions` lists as cleaned up after the last round (removed by lakewarden or by the engine's own maintenance). */
  cleanedUp: number;
  /** Live versions whose row count in `lakewarden versions` differs from the writer's. */
  summaryMismatches: number;
  /** Versions the writer made that `versions` lists neither as live nor as cleaned up. */
  missingFromHistory: number;
  /** Live versions checked by the engine's reader, over all rounds. */
  keptVersionsRead: number;
  /** Every broken promise, one line each (empty when the figures above are clean). */
  problems: string[];
  /** Cleanup runs whose metadata commit (Iceberg's expiry) lost the create-only race to the writer's commit. */
  commitRacesLost: number;
  /** Cleanup runs that refused the catalog pointer they were given because a newer commit had superseded it. */
  supersededPointers: number;
  /** Operations the writer loaded the table again for, a log file it had listed being gone (delta_table.py). */
  writerReloads: number;
  /** Cleanup or head runs that ended in an error, one line each. */
  runErrors: string[];
}

interface WrittenVersion {
  version: string;
  op: string;
  rows: number | null;
  checksum: string | null;
}

interface ReadVersion {
  version: string | null;
  rows?: number;
  checksum?: string;
  error?: string;
}

interface ListedVersion {
  version: number;
  version_id: string;
  is_cleaned_up: boolean;
  total_rows: number | null;
}

interface CleanupJson {
  status: string;
  versions_removed: number[];
  files_removed: Record<string, { files: number; bytes: number }>;
}

export async function raceWritersAndMaintenance(table: EngineTable, options: RaceOptions): Promise<RaceFigures> {
  const log = options.log ?? (() => {});
  const figures: RaceFigures = {
    label: table.label,
    rounds: 0,
    commits: 0,
    cleanups: 0,
    cleanupsDuringWrites: 0,
    headWrites: 0,
    versionsRemoved: 0,
    filesDeleted: 0,
    bytesDeleted: 0,
    rowsLost: 0,
    unreadableKept: 0,
    listedButVacuumed: 0,
    cleanedUp: 0,
    commitRacesLost: 0,
    supersededPointers: 0,
    writerReloads: 0,
    summaryMismatches: 0,
    missingFromHistory: 0,
    keptVersionsRead: 0,
    problems: [],
    runErrors: [],
  };
  await mkdir(options.workDir, { recursive: true });
  const state = join(options.workDir, `${table.label.replace(/\W+/g, "-")}.state.json`);
  const written = new Map<string, WrittenVersion>();
  let latestWritten: WrittenVersion | null = null;

  for (let round = 0; round < options.rounds; round++) {
    const writer = runScript(table, ["write", table.uri, "--state", state, "--commits", String(options.commitsPerRound), "--round", String(round)], options.env);
    // The table exists once the writer's first commit is in; until then lakewarden has nothing to open.
    let writing = true;
    const done = writer.then(
      () => void (writing = false),
      () => void (writing = false),
    );
    while (writing) {
      if (round > 0 || (await tableExists(table))) {
        const during = await maintain(table, options.cleanupFlags, figures);
        if (during) figures.cleanupsDuringWrites++;
      }
      // A pause between runs leaves the writer the CPU (two cores for everything here).
      await Promise.race([done, sleep(options.pauseMs ?? 300)]);
    }
    const output = JSON.parse(lastLine(await writer)) as { commits: WrittenVersion[]; events?: { op: string }[] };
    figures.writerReloads += (output.events ?? []).filter((e) => e.op === "reload").length;
    for (const commit of output.commits) written.set(commit.version, commit);
    latestWritten = output.commits.at(-1) ?? latestWritten;
    figures.commits += output.commits.length;
    figures.rounds++;

    // One more cleanup with the writer quiet, then every live version through the engine's reader.
    if (options.settleMs) await sleep(options.settleMs);
    await maintain(table, options.cleanupFlags, figures);
    const listed = await lakewarden(["versions", table.uri, "--json", ...pointerFlags(table)]);
    if (listed.code !== 0) {
      figures.problems.push(`round ${round}: versions: ${firstLine(listed.stderr)}`);
      continue;
    }
    const records = JSON.parse(listed.stdout) as ListedVersion[];
    const liveRecords = records.filter((r) => !r.is_cleaned_up);
    const live = liveRecords.map((r) => r.version_id);
    const promised = new Set(liveRecords.slice(-options.retainVersions).map((r) => r.version_id));
    const cleaned = new Set(records.filter((r) => r.is_cleaned_up).map((r) => r.version_id));
    // One reader process: the live versions, then the latest (the last entry).
    const read = JSON.parse(lastLine(await runScript(table, ["read", table.uri, ...live.flatMap((v) => ["--version", v])], options.env))) as { versions: ReadVersion[] };
    const head = read.versions.pop();
    for (const got of read.versions) {
      figures.keptVersionsRead++;
      const expected = got.version === null ? undefined : written.get(got.version);
      if (got.error !== undefined && table.listsVacuumedVersions && got.version !== null && !promised.has(got.version) && /not found|No such file/i.test(got.error)) {
        figures.listedButVacuumed++;
        continue;
      }
      checkRead(`round ${round}: kept version ${got.version}`, got, expected, figures);
    }
    if (head && latestWritten) {
      if (head.version !== latestWritten.version)
        figures.problems.push(`round ${round}: the latest version read is ${head.version}, the writer's last is ${latestWritten.version}`);
      checkRead(`round ${round}: latest version ${head.version}`, head, latestWritten, figures);
    }
    // lakewarden's own summary of a version (from the format's metadata, as this writer wrote it) must count its rows as the writer did.
    for (const record of liveRecords) {
      const expected = written.get(record.version_id);
      if (record.total_rows === null || expected?.rows == null || record.total_rows === expected.rows) continue;
      figures.summaryMismatches++;
      figures.problems.push(`round ${round}: lakewarden versions says version ${record.version_id} has ${record.total_rows} rows, the writer wrote ${expected.rows}`);
    }
    figures.cleanedUp = cleaned.size;
    const liveSet = new Set(live);
    for (const version of written.keys()) {
      if (liveSet.has(version) || cleaned.has(version)) continue;
      figures.missingFromHistory++;
      figures.problems.push(`round ${round}: version ${version} the writer made is neither live nor cleaned up in lakewarden versions`);
    }
    log(
      `${table.label} round ${round}: ${output.commits.length} commits, ${live.length} live, ${cleaned.size} cleaned up; removed ${figures.versionsRemoved} versions and ${figures.filesDeleted} files so far`,
    );
  }
  return figures;
}

function checkRead(what: string, got: ReadVersion, expected: WrittenVersion | undefined, figures: RaceFigures): void {
  if (got.error !== undefined) {
    figures.unreadableKept++;
    figures.problems.push(`${what}: the engine cannot read it: ${got.error}`);
    return;
  }
  if (!expected) {
    figures.problems.push(`${what}: not a version the writer made`);
    return;
  }
  // A snapshot in the middle of one operation (pyiceberg's overwrite) has no row count of its own: readable is the promise.
  if (expected.rows === null) return;
  if (got.rows !== expected.rows || got.checksum !== expected.checksum) {
    figures.rowsLost++;
    figures.problems.push(`${what}: read ${got.rows} rows (${got.checksum}), the writer wrote ${expected.rows} (${expected.checksum}) there`);
  }
}

/** One cleanup and one head write; true when the cleanup completed. Errors are counted, never thrown. */
async function maintain(table: EngineTable, cleanupFlags: string[], figures: RaceFigures): Promise<boolean> {
  const pointer = pointerFlags(table);
  const cleanup = await lakewarden(["cleanup", table.uri, "--json", ...cleanupFlags, ...pointer]);
  let completed = false;
  if (cleanup.code === 0) {
    const report = JSON.parse(cleanup.stdout) as CleanupJson;
    completed = report.status === "completed";
    figures.cleanups += completed ? 1 : 0;
    figures.versionsRemoved += report.versions_removed.length;
    for (const kind of Object.values(report.files_removed)) {
      figures.filesDeleted += kind.files;
      figures.bytesDeleted += kind.bytes;
    }
  } else if (LOST_COMMIT_RACE.test(cleanup.stderr)) {
    // An Iceberg expiry commit is a create-only write of the next metadata file, made before any
    // delete: when the writer's commit took that name first, or landed after the run's last
    // re-plan, the run plans again on the writer's commit, a bounded number of times
    // (expiry-rules.test.ts); past them it stops with exit 1, nothing written or deleted, and the
    // next run plans on the writer's commit (a commit during the planning: expiry-replan.test.ts).
    figures.commitRacesLost++;
  } else if (SUPERSEDED_POINTER.test(cleanup.stderr)) {
    // The catalog's pointer, read just before the run, was overtaken by the writer's next commit
    // (its metadata file is written before the catalog row moves): cleanup refuses to clean by a
    // superseded pointer, nothing written or deleted, and the next run reads the new pointer.
    figures.supersededPointers++;
  } else if (cleanup.code !== 3) {
    // Exit 3: another cleaner holds the lease, which is the lease doing its job.
    figures.runErrors.push(`cleanup (exit ${cleanup.code}): ${firstLine(cleanup.stderr)}`);
  }
  const head = await lakewarden(["head", "write", table.uri, ...pointer]);
  if (head.code === 0) figures.headWrites++;
  else figures.runErrors.push(`head write (exit ${head.code}): ${firstLine(head.stderr)}`);
  return completed;
}

/** The two ways lakewarden says its expiry commit lost to a writer's: the name taken, or a newer metadata file found first. */
const LOST_COMMIT_RACE = new RegExp(
  [
    /metadata\/v\d+\.metadata\.json: already exists \(If-None-Match: \*\)/.source, // local disk
    /metadata\/v\d+\.metadata\.json: precondition failed \(412\)/.source, // S3
    /the current metadata is metadata\/v\d+\.metadata\.json, not metadata\/v\d+\.metadata\.json: re-plan/.source,
  ].join("|"),
);

const SUPERSEDED_POINTER = /the pointer \S+ is superseded by \S+ .*nothing written or deleted/;

function pointerFlags(table: EngineTable): string[] {
  const pointer = table.metadataLocation?.();
  return pointer ? ["--metadata-location", pointer] : [];
}

/** True once the table has a version lakewarden can list (an Iceberg table just created has no snapshot yet). */
async function tableExists(table: EngineTable): Promise<boolean> {
  if (table.metadataLocation && table.metadataLocation() === null) return false;
  const shown = await lakewarden(["versions", table.uri, "--json", "--limit", "1", ...pointerFlags(table)]);
  // A table with no snapshot yet lists an empty history (exit 0): it exists, with nothing to maintain.
  return shown.code === 0 && (JSON.parse(shown.stdout) as unknown[]).length > 0;
}

async function lakewarden(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Runs one of the engine scripts with the tools' Python; resolves with its stdout, rejects with its stderr. */
export function runScript(table: Pick<EngineTable, "script" | "scriptArgs">, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(toolPython(), [join(HERE, table.script), ...args, ...(table.scriptArgs ?? [])], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${table.script} ${args[0]} exited ${code}: ${stderr.trim().split("\n").slice(-14).join(" | ")}`)),
    );
  });
}

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The figures as one line, for logs and the soak's results. */
export function figuresLine(f: RaceFigures): string {
  return (
    `${f.label}: ${f.rounds} rounds, ${f.commits} commits, ${f.cleanups} cleanups (${f.cleanupsDuringWrites} during writes, ${f.commitRacesLost} expiry commits lost to the writer, ${f.supersededPointers} superseded pointers refused), ${f.headWrites} head writes, ` +
    `${f.versionsRemoved} versions removed, ${f.filesDeleted} files deleted, ${f.cleanedUp} listed as cleaned up, ${f.keptVersionsRead} kept versions read, ` +
    `${f.rowsLost} rows lost, ${f.unreadableKept} kept versions unreadable, ${f.missingFromHistory} missing from history, ${f.summaryMismatches} row counts misreported` +
    (f.listedButVacuumed > 0 ? `, ${f.listedButVacuumed} reads of versions listed live whose data VACUUM took` : "") +
    (f.writerReloads > 0 ? `, ${f.writerReloads} writer reloads after a log file it listed was removed` : "")
  );
}
