/**
 * Snapshot expiry through the AWS Glue Data Catalog: pyiceberg's GlueCatalog writes the table
 * (moto's S3 and Glue, test/catalog/catalog_table.py), lakewarden expires by the table's own
 * history.expire.* and commits through Glue (a create-only metadata file, then UpdateTable guarded
 * by the entry's VersionId), and pyiceberg reads the result back through Glue.
 *
 * moto's Glue does not enforce UpdateTable's VersionId (moto 5.2.5 replaces the entry whatever it
 * says); the recording pass-through in front of it does, as real Glue does
 * (test/support/glue-server.ts, enforceVersionId), so both pyiceberg and lakewarden meet Glue's
 * ConcurrentModificationException. lakewarden also re-reads the entry right before UpdateTable:
 * one test races a commit into the moment before that re-read, another into the moment after it
 * (only the VersionId refuses that one), one right after lakewarden's commit, and one runs
 * pyiceberg's writer alongside a whole cleanup.
 */
import { GlueClient, UpdateTableCommand } from "@aws-sdk/client-glue";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GlueCatalog, type GlueTableName } from "../../lib/catalog/glue.ts";
import type { TableCatalog } from "../../lib/formats/catalog-commit.ts";
import { formatAtCatalogPointer } from "../../lib/formats/catalog.ts";
import { CatalogCommitError } from "../../lib/formats/errors.ts";
import { runCleanupThroughCatalog } from "../../lib/maintenance/catalog-cleanup.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { startGlueServer, type GlueServer } from "../support/glue-server.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { startCatalogPython, type CatalogPython } from "../support/catalog-python.ts";

const BUCKET = "glue-commit-lake";
/** The table's history.expire.max-snapshot-age-ms: snapshots older than this (beyond the newest) expire. */
const RETAIN_MS = 1500;

let moto: MotoHandle;
let glue: GlueServer;
let client: GlueClient;
let catalog: GlueCatalog;
/** pyiceberg through the pass-through, and straight to moto (`direct`), each one long-lived process. */
const workers: { recorded?: CatalogPython; direct?: CatalogPython } = {};
const savedEnv = { ...process.env };

beforeAll(async () => {
  moto = await startMotoServer({ buckets: [BUCKET] });
  glue = await startGlueServer(moto, { enforceVersionId: true });
  client = new GlueClient({ ...glue.clientConfig });
  catalog = new GlueCatalog({ client });
  Object.assign(process.env, moto.awsEnv);
}, 60_000);

afterAll(async () => {
  await Promise.all([workers.recorded?.stop(), workers.direct?.stop()]);
  process.env = savedEnv;
  client?.destroy();
  await glue?.stop();
  await moto?.stop();
});

interface Snapshot {
  version: string;
  rows: number;
  checksum: string;
}

/** catalog_table.py through the pass-through (the recorded, VersionId-enforcing Glue), or straight to moto (`direct`: from inside a pass-through hook). */
async function py<T>(args: string[], options: { direct?: boolean } = {}): Promise<T> {
  const which = options.direct ? "direct" : "recorded";
  workers[which] ??= startCatalogPython({
    ...process.env,
    ...moto.awsEnv,
    AWS_ENDPOINT_URL_GLUE: options.direct ? moto.endpoint : glue.endpoint,
    AWS_ENDPOINT_URL_S3: moto.endpoint,
  });
  return workers[which].run<T>(args);
}

const write = (table: string, commits: number, options: { direct?: boolean } = {}) =>
  py<{ snapshots: Snapshot[]; retries: number; metadata_location: string }>(
    ["write", table, location(table), "--commits", String(commits), "--retain-ms", String(RETAIN_MS)],
    options,
  );
const read = (table: string, versions: readonly string[] = []) =>
  py<{ versions: Snapshot[]; current: string; snapshots: string[]; refs: Record<string, string>; metadata_location: string }>([
    "read",
    table,
    ...versions.flatMap((v) => ["--version", v]),
  ]);
const filesOf = (table: string) => py<Record<string, string[]>>(["files", table]);

function location(table: string): string {
  return `s3://${BUCKET}/${table.replace(".", "/")}`;
}
function nameOf(table: string): GlueTableName {
  const [database, name] = table.split(".") as [string, string];
  return { database, table: name };
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function keysUnder(table: string): Promise<Set<string>> {
  const prefix = `${table.replace(".", "/")}/`;
  const keys = new Set<string>();
  let token: string | undefined;
  do {
    const page = await moto.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) keys.add(`s3://${BUCKET}/${object.Key}`);
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

/** Files the expired snapshots reached that no kept snapshot does: each must be gone; every kept snapshot's must be there. */
async function checkFiles(table: string, before: Record<string, string[]>, kept: readonly string[]): Promise<{ onlyExpired: string[] }> {
  const keys = await keysUnder(table);
  const keptFiles = new Set(kept.flatMap((id) => before[id] ?? []));
  const onlyExpired = Object.entries(before)
    .filter(([id]) => !kept.includes(id))
    .flatMap(([, files]) => files)
    .filter((f) => !keptFiles.has(f));
  for (const file of keptFiles) expect(keys.has(file), `kept ${file}`).toBe(true);
  for (const file of onlyExpired) expect(keys.has(file), `expired-only ${file}`).toBe(false);
  return { onlyExpired };
}

/** A catalog seam that runs `hook` at one step of the commit (a writer's commit forced in there). */
function withHook(inner: TableCatalog, at: "before-update" | "after-update", hook: () => Promise<void>): TableCatalog {
  let done = false;
  const once = async () => {
    if (done) return;
    done = true;
    await hook();
  };
  return {
    label: inner.label,
    load: () => inner.load(),
    updateParameters: async (base, changes) => {
      if (at === "before-update") await once();
      const answer = await inner.updateParameters!(base, changes);
      if (at === "after-update" && answer.outcome === "accepted") await once();
      return answer;
    },
  };
}

describe("moto's Glue", () => {
  it("does not enforce UpdateTable's VersionId (so the pass-through does, as Glue does)", async () => {
    const moto_ = new GlueCatalog({ client: moto.glueClient });
    await glue.setTable("facts", "versioned", { parameters: { table_type: "ICEBERG", metadata_location: "s3://b/t/metadata/00001-a.metadata.json" } });
    await glue.setTable("facts", "versioned", { parameters: { table_type: "ICEBERG", metadata_location: "s3://b/t/metadata/00002-a.metadata.json" } });
    const stale = { ...(await moto_.table({ database: "facts", table: "versioned" })), version: "1" };
    await moto.glueClient.send(
      new UpdateTableCommand({
        DatabaseName: "facts",
        VersionId: stale.version,
        TableInput: { Name: "versioned", Parameters: { table_type: "ICEBERG", metadata_location: "s3://b/t/metadata/00003-a.metadata.json" } },
      }),
    );
    expect((await moto_.table({ database: "facts", table: "versioned" })).parameters.metadata_location).toBe("s3://b/t/metadata/00003-a.metadata.json");
    // Through the pass-through, lakewarden's guarded update on that stale entry is refused.
    expect(await catalog.updateParameters({ database: "facts", table: "versioned" }, stale, { metadata_location: "s3://b/t/metadata/00004-a.metadata.json" })).toEqual({
      outcome: "conflict",
      reason: "the entry is at version 3, not 1, the one the plan read",
    });
  });
});

describe("Iceberg expiry through the Glue Data Catalog (pyiceberg writes, lakewarden expires)", () => {
  it("expires by history.expire.* through UpdateTable; pyiceberg reads the current and every kept snapshot; only-expired files are gone; versions lists every snapshot", async () => {
    const table = "sales.orders";
    const written = await write(table, 4);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const entryBefore = await catalog.table(nameOf(table));
    const store = openStore(location(table));

    const report = await runCleanupThroughCatalog(store, catalog.tableCatalog(nameOf(table)));
    expect(report.status).toBe("completed");
    expect(report.catalog_replans).toEqual([]);

    const entry = await catalog.table(nameOf(table));
    expect(entry.parameters.previous_metadata_location).toBe(entryBefore.parameters.metadata_location);
    expect(entry.parameters.metadata_location).toMatch(/\/metadata\/00005-[0-9a-f-]{36}\.metadata\.json$/);
    expect(Number(entry.version)).toBe(Number(entryBefore.version) + 1);

    const newest = written.snapshots.at(-1)!;
    const after = await read(table);
    expect(after.metadata_location).toBe(entry.parameters.metadata_location);
    expect(after.snapshots).toEqual([newest.version]);
    expect(after.versions).toEqual([newest]);
    const { onlyExpired } = await checkFiles(table, before, after.snapshots);
    // pyiceberg's fast appends carry the older manifests forward: what only the 3 expired snapshots reached is their manifest lists.
    expect(onlyExpired).toHaveLength(3);
    for (const file of onlyExpired) expect(file).toMatch(/\/metadata\/snap-[^/]+\.avro$/);

    const timeline = await readTimeline(store, formatAtCatalogPointer(store, entry).format);
    expect(timeline.records.map((r) => r.version_id)).toEqual(written.snapshots.map((s) => s.version));
  }, 120_000);

  it("an expired tag (max-ref-age-ms) is dropped by the same UpdateTable commit, and the snapshot only it kept expires with the others", async () => {
    const table = "sales.expired_tag";
    const written = await write(table, 3);
    const [oldest, , newest] = written.snapshots as [Snapshot, Snapshot, Snapshot];
    await py(["tag", table, "before-migration", "--snapshot", oldest.version, "--max-ref-age-ms", String(RETAIN_MS)]);
    expect((await read(table)).refs).toEqual({ main: newest.version, "before-migration": oldest.version });
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const report = await runCleanupThroughCatalog(openStore(location(table)), catalog.tableCatalog(nameOf(table)));
    expect(report.status).toBe("completed");
    const after = await read(table);
    expect(after.refs).toEqual({ main: newest.version });
    expect(after.snapshots).toEqual([newest.version]);
    expect(after.versions).toEqual([newest]);
    await checkFiles(table, before, after.snapshots);
  }, 120_000);

  it("a tag keeps its snapshot: pyiceberg time-travels to it after the expiry", async () => {
    const table = "sales.tagged";
    const written = await write(table, 3);
    await py(["tag", table, "audit", "--snapshot", written.snapshots[0]!.version]);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const report = await runCleanupThroughCatalog(openStore(location(table)), catalog.tableCatalog(nameOf(table)));
    expect(report.status).toBe("completed");
    const kept = [written.snapshots[0]!.version, written.snapshots[2]!.version];
    const after = await read(table, [written.snapshots[0]!.version]);
    expect(after.snapshots.sort()).toEqual([...kept].sort());
    expect(after.versions).toEqual([written.snapshots[0], written.snapshots[2]]);
    await checkFiles(table, before, kept);
  }, 120_000);

  for (const [step, at] of [
    ["between lakewarden's load and its re-read before UpdateTable (the re-read refuses it)", "before-update"],
    ["between the re-read and UpdateTable (Glue's VersionId refuses it)", "pass-through"],
  ] as const) {
    it(`a pyiceberg commit ${step}: lakewarden re-plans on it; both commits survive`, async () => {
      const table = `race.${at.replace("-", "_")}`;
      const written = await write(table, 3);
      await sleep(RETAIN_MS + 300);
      let racer: Snapshot[] = [];
      const race = async () => {
        racer = (await write(table, 1, { direct: true })).snapshots;
      };
      const updatesBefore = glue.requests.filter((r) => r.target === "AWSGlue.UpdateTable").length;
      let seam = catalog.tableCatalog(nameOf(table));
      if (at === "before-update") seam = withHook(seam, "before-update", race);
      else {
        let raced = false;
        glue.beforeUpdate(async (request) => {
          if (raced || request.body.TableInput?.Name !== nameOf(table).table) return;
          raced = true;
          await race();
        });
      }
      try {
        const before = await filesOf(table);
        const report = await runCleanupThroughCatalog(openStore(location(table)), seam);
        expect(report.status).toBe("completed");
        expect(report.catalog_replans).toHaveLength(1);
        expect(report.catalog_replans[0]).toMatch(at === "before-update" ? /the entry is at version \d+, not \d+, the one the plan read/ : /ConcurrentModificationException/);
        // lakewarden's UpdateTables (the racer's go straight to moto): the refused one reached Glue only when the re-read could not see the move.
        const updates = glue.requests.filter((r) => r.target === "AWSGlue.UpdateTable").length - updatesBefore;
        expect(updates).toBe(at === "before-update" ? 1 : 2);

        const after = await read(table);
        expect(racer).toHaveLength(1);
        expect(after.current).toBe(racer[0]!.version);
        expect(after.versions).toEqual([{ ...racer[0]!, rows: written.snapshots.at(-1)!.rows + 3 }]);
        // Only the racer's snapshot and its parent (the newest within 1.5 s when the re-plan ran, or the one min-keep holds) may remain.
        expect(after.snapshots).toContain(racer[0]!.version);
        expect(after.snapshots).not.toContain(written.snapshots[0]!.version);
        await checkFiles(table, { ...before, ...(await filesOf(table)) }, after.snapshots);
      } finally {
        glue.beforeUpdate(null);
      }
    }, 120_000);
  }

  it("a pyiceberg commit right after lakewarden's: a fresh load shows it written on top of lakewarden's, and the expiry's deletes go ahead", async () => {
    const table = "race.after_update";
    const written = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    let racer: Snapshot[] = [];
    const seam = withHook(catalog.tableCatalog(nameOf(table)), "after-update", async () => {
      racer = (await write(table, 1, { direct: true })).snapshots;
    });
    const report = await runCleanupThroughCatalog(openStore(location(table)), seam);
    expect(report.status).toBe("completed");
    expect(report.catalog_replans).toEqual([]);
    const after = await read(table);
    expect(after.current).toBe(racer[0]!.version);
    expect(after.snapshots.sort()).toEqual([written.snapshots.at(-1)!.version, racer[0]!.version].sort());
    await checkFiles(table, before, after.snapshots);
  }, 120_000);

  it("pyiceberg's writer committing alongside a whole cleanup: every commit lands (a refused one retried), no file a surviving snapshot needs is deleted", async () => {
    const table = "race.alongside";
    const first = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const [writer, report] = await Promise.all([
      write(table, 6),
      (async () => {
        await sleep(500);
        return runCleanupThroughCatalog(openStore(location(table)), catalog.tableCatalog(nameOf(table)), { maxCommitReplans: 10 });
      })(),
    ]);
    expect(report.status).toBe("completed");
    const after = await read(table);
    // Every commit the writer made is in the current snapshot's rows: 3 + 6 appends of 3 rows each.
    expect(after.versions.at(-1)).toEqual(writer.snapshots.at(-1));
    expect(after.versions.at(-1)!.rows).toBe(27);
    // lakewarden's expiry landed too: the oldest snapshots, past the retention when it planned, are gone.
    expect(after.snapshots).not.toContain(first.snapshots[0]!.version);
    // Every snapshot still in the metadata reads whole.
    const kept = await read(table, after.snapshots);
    expect(kept.versions).toHaveLength(after.snapshots.length + 1);
  }, 180_000);

  it("an accepted commit a fresh load does not show (the entry pointed back at the old metadata at once): unconfirmed, nothing deleted", async () => {
    const table = "race.rolled_back";
    await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const keysBefore = await keysUnder(table);
    const entryBefore = await catalog.table(nameOf(table));
    // Another tool rolls the entry back to the metadata the plan read, right after Glue took lakewarden's update.
    const seam = withHook(catalog.tableCatalog(nameOf(table)), "after-update", async () => {
      await moto.glueClient.send(
        new UpdateTableCommand({ DatabaseName: "race", TableInput: { Name: "rolled_back", TableType: "EXTERNAL_TABLE", Parameters: entryBefore.parameters } }),
      );
    });
    const error = await runCleanupThroughCatalog(openStore(location(table)), seam).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogCommitError);
    expect((error as CatalogCommitError).outcome).toBe("unconfirmed");
    expect((error as Error).message.split("\n")).toHaveLength(1);
    expect((error as Error).message).toMatch(/a fresh load names .*, which is not it nor written on top of it; nothing deleted/);
    const keysAfter = await keysUnder(table);
    for (const key of keysBefore) expect(keysAfter.has(key), key).toBe(true);
    // pyiceberg still reads every snapshot of the metadata the entry names.
    const after = await read(table);
    expect(after.metadata_location).toBe(entryBefore.parameters.metadata_location);
    expect((await read(table, after.snapshots)).versions).toHaveLength(after.snapshots.length + 1);
  }, 120_000);

  it("a commit whose answer is lost (Glue applied it, then answered nothing): the run stops with every file in place; the next run finishes the job", async () => {
    const table = "sales.lost_answer";
    const written = await write(table, 3);
    await sleep(RETAIN_MS + 300);
    const before = await filesOf(table);
    const keysBefore = await keysUnder(table);
    const store = openStore(location(table));
    glue.killAfterNextUpdate();
    let error: unknown;
    try {
      error = await runCleanupThroughCatalog(store, catalog.tableCatalog(nameOf(table))).catch((e: unknown) => e);
    } finally {
      glue.revive();
    }
    expect(error).toBeInstanceOf(CatalogCommitError);
    expect((error as CatalogCommitError).outcome).toBe("unknown");
    expect((error as Error).message.split("\n")).toHaveLength(1);
    expect((error as Error).message).toMatch(/got no answer .*: it may or may not have applied; stopped with nothing deleted/);
    const keysAfter = await keysUnder(table);
    for (const key of keysBefore) expect(keysAfter.has(key), key).toBe(true);
    // Glue took the commit: the entry names lakewarden's file.
    const entry = await catalog.table(nameOf(table));
    expect(entry.parameters.metadata_location).toMatch(/\/metadata\/00004-[0-9a-f-]{36}\.metadata\.json$/);

    const next = await runCleanupThroughCatalog(store, catalog.tableCatalog(nameOf(table)));
    expect(next.status).toBe("completed");
    const after = await read(table);
    expect(after.snapshots).toEqual([written.snapshots.at(-1)!.version]);
    await checkFiles(table, before, after.snapshots);
  }, 120_000);
});
