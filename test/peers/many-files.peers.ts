/**
 * Parity on tables with thousands of files, on local disk and on S3 (the emulator, undelayed):
 * the side-by-side benchmark's tables (bench/side-by-side-tables.ts: each format's own writer, 10
 * full overwrites, the cutoff after the fifth) at 2,000 files, cleaned on copies by lakewarden
 * (bundled, as the Lambda runs it) and by each format's own maintenance (delta-rs vacuum +
 * cleanup_metadata, pylance cleanup_old_versions, iceberg-core ExpireSnapshots + orphans, on S3
 * through iceberg-aws's S3FileIO), each told the same cutoff (bench/side-by-side-tools.ts). The
 * deleted sets must be the same file for file; then the format's own reader reads every version
 * lakewarden kept from lakewarden's copy (bench/tools/peer_tables.py read): each holds the rows its
 * commit wrote. Iceberg's local copy is not read: its files are named under the master's folder,
 * so a reader would read the master's; on S3 the copy sits where the files are named.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3Env } from "../../bench/harness/s3-env.ts";
import { ensureMaster, filesPerVersion, type Format, listTableKeys, prepareCopy, readVersions, removeCopy, type Storage } from "../../bench/side-by-side-tables.ts";
import { PEER_OF, prepareToolKit, runTool, type Tool, type ToolKit } from "../../bench/side-by-side-tools.ts";

const FILES = 2_000;
const VERSIONS = 10;
const CELLS: [Format, Storage][] = [
  ["delta", "local"],
  ["delta", "s3"],
  ["lance", "local"],
  ["lance", "s3"],
  ["iceberg", "local"],
  ["iceberg", "s3"],
];

let work = "";
let s3: S3Env;
let kit: ToolKit;

describe(`parity at ${FILES.toLocaleString("en")} files: the benchmark's tables, each format's own cleanup against lakewarden's`, () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "lw-peers-many-"));
    s3 = await S3Env.start(0, "memory");
    kit = await prepareToolKit(work, { icebergOnS3: true });
  });
  afterAll(async () => {
    await s3?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it.each(CELLS)("%s on %s: the same files deleted, every version lakewarden kept reads whole", async (format, storage) => {
    const spec = { format, files: FILES, versions: VERSIONS };
    const master = await ensureMaster(join(work, "cache"), spec, format === "iceberg" && storage === "s3" ? s3 : null, () => {});
    const deleted = new Map<Tool, string[]>();
    for (const tool of ["lakewarden", PEER_OF[format]] as const) {
      const copy = await prepareCopy(master, storage, `many-${format}-${storage}-${tool}`, work, s3);
      const before = await listTableKeys(storage, copy.uri, s3);
      await runTool(tool, copy, kit, s3, work);
      const after = new Set(await listTableKeys(storage, copy.uri, s3));
      deleted.set(tool, before.filter((key) => !after.has(key)).sort());
      if (tool === "lakewarden" && !(format === "iceberg" && storage === "local")) {
        const env = storage === "s3" ? { ...s3.sdkEnvironment(), AWS_ENDPOINT_URL: s3.directEndpoint } : {};
        // Delta keeps every version from the one current at the cutoff on (its files' tombstones are younger),
        // Lance and Iceberg the versions committed after it.
        const read = await readVersions(format, copy.uri, format === "delta" ? copy.versionAtCutoff : copy.versionAtCutoff + 1, env);
        expect(read.versions.length, copy.uri).toBeGreaterThanOrEqual(VERSIONS - Math.floor(VERSIONS / 2));
        for (const { version, rows, operation } of read.versions) {
          // pyiceberg's overwrite is two snapshots: a delete of every row, then the append.
          expect(rows, `${format} on ${storage}, version ${version} (${operation ?? "commit"})`).toBe(operation === "delete" ? 0 : filesPerVersion(spec));
        }
      }
      await removeCopy(storage, copy, s3);
    }
    const ours = deleted.get("lakewarden")!;
    const theirs = deleted.get(PEER_OF[format])!;
    // About half the files expire: the five versions before the cutoff's.
    expect(ours.length).toBeGreaterThan(FILES / 3);
    expect({ onlyLakewarden: ours.filter((k) => !theirs.includes(k)), onlyPeer: theirs.filter((k) => !ours.includes(k)) }).toEqual({ onlyLakewarden: [], onlyPeer: [] });
  });
});
