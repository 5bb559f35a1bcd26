/**
 * The damage matrix on a Lance table written by LanceDB: every role of file the latest version
 * depends on (its manifest, a data file, its deletion file, a file of its index, its transaction
 * file), each damage, one at a time. LanceDB is the independent reader.
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormat } from "../../../lib/formats/lance/lance-format.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { runCheckpoint } from "../../../lib/maintenance/run-checkpoint.ts";
import { rm } from "node:fs/promises";
import { readTimeline } from "../../../lib/versions/timeline.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../../support/lance-datasets.ts";
import type { DatasetStep } from "../../support/lance-datasets.ts";
import { copyTree, listTree, readContents } from "../lance-checks.ts";
import type { TableContents } from "../lance-checks.ts";
import { DAMAGES, aggressive, cleanDamaged, damageFile, deepProofFor, verdict } from "./damage.ts";
import type { Damage } from "./damage.ts";

/**
 * Four older versions that cleanup removes, then the three it keeps (retainVersions 3), which
 * write files of every role that no removed version names: an index, a data file, deletion files.
 * (A file a removed version names too is read by no proof: if it is damaged, that version is as
 * broken as the kept one, so removing it loses nothing; prove-kept.ts says why.)
 */
const HISTORY: readonly DatasetStep[] = [
  { op: "create", rows: 20 },
  { op: "append", rows: 10 },
  { op: "update", where: "id < 3", values: { score: "1.5" } },
  { op: "delete", where: "id % 4 = 1" },
  { op: "createIndex" },
  { op: "append", rows: 10 },
  { op: "delete", where: "id % 5 = 2" },
];
const RETAINED = 3;

const ROLES = ["manifest", "data", "deletion file", "index file", "transaction"] as const;
type Role = (typeof ROLES)[number];

const dirs: string[] = [];
let source = "";
let before: TableContents;

beforeAll(async () => {
  const dbUri = await makeTempDir("lw-damage-lance-");
  dirs.push(dbUri);
  const ds = await buildLanceDataset({ dbUri, steps: HISTORY });
  ds.close();
  source = dbUri;
  before = await readContents(dbUri);
});
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** The file of `role` the latest version depends on and no removed version names, relative to the table root. */
async function fileOf(tableDir: string, role: Role): Promise<string> {
  const store = new LocalStore(tableDir);
  const latest = (await lanceFormat.latestVersionFile(store))!;
  if (role === "manifest") return latest.key;
  const snapshot = await lanceFormat.readSnapshot(store, latest);
  const removedNames = new Set<string>();
  for (const file of await lanceFormat.listVersionFiles(store)) {
    if (file.version > latest.version - RETAINED) continue;
    for (const reference of (await lanceFormat.readSnapshot(store, file)).referencedFiles) removedNames.add(reference.path);
  }
  const wanted = { data: "data", "deletion file": "delete", "index file": "index", transaction: "transaction" }[role];
  const reference = snapshot.referencedFiles.find((file) => file.role === wanted && !removedNames.has(file.path));
  if (!reference) throw new Error(`the test table's latest version has no ${role}`);
  if (!reference.path.endsWith("/")) return reference.path;
  // An index is a folder: damage its largest file.
  const names = await readdir(join(tableDir, reference.path));
  return reference.path + names.sort()[0]!;
}

describe("damage matrix: Lance (LanceDB writes, LanceDB reads)", () => {
  const cases = ROLES.flatMap((role) => DAMAGES.map((damage) => [role, damage] as [Role, Damage]));
  it.each(cases)("%s %s: cleanup deletes nothing, or every version it keeps reads as before; the dry run says the same", async (role, damage) => {
    const dbUri = await makeTempDir("lw-damage-case-");
    dirs.push(dbUri);
    await copyTree(source, dbUri);
    const tableDir = join(dbUri, "t.lance");
    const target = await fileOf(tableDir, role);
    await damageFile(join(tableDir, target), damage);
    const sized = role === "data" || role === "index file";
    const outcome = await cleanDamaged(tableDir, lanceFormat, {
      ...aggressive(),
      settings: { ...aggressive().settings, retainVersions: RETAINED },
      ...deepProofFor(damage, sized),
    });
    const problems = await verdict(outcome, async (versions) => {
      const after = await readContents(dbUri).catch(() => null);
      if (!after) return ["LanceDB cannot open the table"];
      return versions
        .filter((v) => JSON.stringify(after.versions.get(v)) !== JSON.stringify(before.versions.get(v)))
        .map((v) => `kept version ${v} reads ${JSON.stringify(after.versions.get(v) ?? "nothing")}, was ${JSON.stringify(before.versions.get(v))}`);
    });
    expect(problems, `${target} ${damage}; cleanup ${outcome.error ?? "ran"}`).toEqual([]);
    // A damage the latest version cannot be read through is refused, naming the file.
    if (outcome.error) expect(outcome.error).toContain(role === "manifest" ? "" : target);
  });

  /**
   * lakewarden's own checkpoint: a first cleanup (keeping five versions) archives the removed ones
   * into it; then it is damaged and a second cleanup (keeping three) archives two more. No version
   * `versions` listed before goes silently: each is listed still, or a history problem names the
   * file; and the damaged bytes are kept under _lakewarden/, never overwritten or deleted.
   */
  // A checkpoint gone entirely, with no head or newer checkpoint naming it: the run receipts name it.
  const ownCases = (damages: readonly Damage[]) => damages.map((damage) => [damage] as [Damage]);
  it.each(ownCases(DAMAGES))("lakewarden's checkpoint %s: no history lost silently, the damaged bytes kept", (damage) => ownCheckpointCase(damage));

  it("lakewarden checkpoint after its newest checkpoint was deleted outright: the gap is remembered, not written over", async () => {
    const dbUri = await makeTempDir("lw-damage-own-checkpoint-");
    dirs.push(dbUri);
    await copyTree(source, dbUri);
    const tableDir = join(dbUri, "t.lance");
    await runCleanup(new LocalStore(tableDir), { format: lanceFormat, settings: { ...aggressive().settings, retainVersions: 5 }, now: aggressive().now });
    const target = (await listTree(tableDir)).filter((file) => file.startsWith("_lakewarden/checkpoints/")).at(-1)!;
    await rm(join(tableDir, target));
    const report = await runCheckpoint(new LocalStore(tableDir), { format: lanceFormat });
    expect(report.checkpoint.setAside?.map((note) => note.file)).toEqual([target]);
    const timeline = await readTimeline(new LocalStore(tableDir), lanceFormat);
    expect(timeline.historyProblems.map((problem) => problem.file)).toContain(target);
  });

  async function ownCheckpointCase(damage: Damage): Promise<void> {
    const dbUri = await makeTempDir("lw-damage-own-");
    dirs.push(dbUri);
    await copyTree(source, dbUri);
    const tableDir = join(dbUri, "t.lance");
    const clean = (retainVersions: number) =>
      runCleanup(new LocalStore(tableDir), { format: lanceFormat, settings: { ...aggressive().settings, retainVersions }, now: aggressive().now });
    expect((await clean(5)).versions_removed.length).toBeGreaterThan(0);
    const listedBefore = (await readTimeline(new LocalStore(tableDir), lanceFormat)).records.map((record) => record.version);
    const target = (await listTree(tableDir)).filter((file) => file.startsWith("_lakewarden/checkpoints/")).at(-1)!;
    await damageFile(join(tableDir, target), damage);
    const damaged = damage === "missing" ? null : await readFile(join(tableDir, target));
    const second = await clean(RETAINED).then(
      (report) => `${report.status}, warnings: ${report.warnings.join("; ")}`,
      (error: Error) => `failed: ${error.message}`,
    );
    const timeline = await readTimeline(new LocalStore(tableDir), lanceFormat);
    const listed = new Set(timeline.records.map((record) => record.version));
    const missing = listedBefore.filter((version) => !listed.has(version));
    if (missing.length > 0)
      expect(timeline.historyProblems.map((p) => p.file).join(", "), `versions ${missing.join(", ")} gone with no problem reported (cleanup: ${second})`).toContain(
        target.split("/").at(-1)!,
      );
    if (damaged && damaged.length > 0) {
      const ours = (await listTree(tableDir)).filter((file) => file.startsWith("_lakewarden/"));
      const copies = await Promise.all(ours.map(async (file) => Buffer.compare(await readFile(join(tableDir, file)), damaged) === 0));
      expect(copies.some(Boolean), `the damaged bytes of ${target} are kept under _lakewarden/ (cleanup: ${second})`).toBe(true);
    }
  }
});
