/**
 * Cleanup's own Iceberg expiry commit (`v<N+1>.metadata.json`, the same current snapshot) left the
 * stored head describing the previous metadata file: the next `head show` warned and read the
 * metadata instead. A run that writes its removal commit now brings an existing head up to it
 * (the CLI and the cleanup-table Lambda alike, through refreshHeadAfterCleanup); a table with no
 * head gets none, and a run that commits nothing writes nothing.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { BufferIO } from "../../../lib/cli/io.ts";
import { runCli } from "../../../lib/cli/run-cli.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { refreshHeadAfterCleanup } from "../../../lib/head/after-cleanup.ts";
import { createCleanupTableHandler } from "../../../functions/cleanup-table/cleanup-table.ts";
import { encodeCleanupRequest } from "../../../functions/shared/cleanup-request.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { openStore } from "../../../lib/store/open-store.ts";
import { copyIcebergFixture, fileExists } from "../../support/iceberg-fixtures.ts";

async function cli(...argv: string[]) {
  const io = new BufferIO();
  const code = await runCli(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

async function bunnies(): Promise<string> {
  const c = await copyIcebergFixture("spark-bunnies", { ageMs: 400 * DAY_MS });
  onTestFinished(c.remove);
  return c.dir;
}

describe("the head after cleanup's own expiry commit", () => {
  it("CLI: head show after cleanup reads the head, which names the new metadata file, with no warning", async () => {
    const dir = await bunnies();
    const write = await cli("head", "write", dir, "--json");
    expect(write.code, write.stderr).toBe(0);
    const run = await cli("cleanup", dir, "--json");
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { removal_commit: { status: string; key: string } };
    expect(report.removal_commit).toMatchObject({ status: "written", key: "metadata/v6.metadata.json" });
    expect(await fileExists(dir, "metadata/v6.metadata.json")).toBe(true);
    const show = await cli("head", "show", dir, "--json");
    expect(show.code, show.stderr).toBe(0);
    expect(show.stderr).toBe("");
    const head = JSON.parse(show.stdout) as { source: string; warning?: unknown; version_file: { key: string; size: number } };
    expect(head.source).toBe("head");
    expect(head.warning ?? null).toBeNull();
    expect(head.version_file.key).toBe("metadata/v6.metadata.json");
    expect(head.version_file.size).toBe((await readFile(join(dir, "metadata/v6.metadata.json"))).length);
  });

  it("the cleanup-table Lambda brings the head up too", async () => {
    const dir = await bunnies();
    await cli("head", "write", dir);
    const uri = new LocalStore(dir).uri;
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const handler = createCleanupTableHandler({
      scopes: { tables: [uri], prefixes: [] },
      openStore: (location) => openStore(location),
      runCleanup,
      settings: {},
      log: quiet,
      metrics: { addMetric: () => undefined } as never,
    });
    const event = { Records: [{ messageId: "m1", body: encodeCleanupRequest({ table: uri, requestedAt: new Date().toISOString() }) }] };
    const answer = await handler(event as never);
    expect(answer.batchItemFailures).toEqual([]);
    expect(await fileExists(dir, "metadata/v6.metadata.json")).toBe(true);
    const show = await cli("head", "show", dir, "--json");
    expect(show.stderr).toBe("");
    const head = JSON.parse(show.stdout) as { source: string; version_file: { key: string } };
    expect([head.source, head.version_file.key]).toEqual(["head", "metadata/v6.metadata.json"]);
  });

  it("a table with no head gets none from cleanup", async () => {
    const dir = await bunnies();
    const run = await cli("cleanup", dir, "--json");
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { removal_commit: { status: string } }).removal_commit.status).toBe("written");
    expect(await fileExists(dir, "_lakewarden/head")).toBe(false);
  });

  it("a run that wrote no commit (a dry run, or nothing due) leaves the head alone", async () => {
    const dir = await bunnies();
    const store = new LocalStore(dir);
    await cli("head", "write", dir);
    const before = await store.head("_lakewarden/head");
    expect(await refreshHeadAfterCleanup(store, { removal_commit: { status: "would write", key: null } })).toMatchObject({ action: "none" });
    expect(await refreshHeadAfterCleanup(store, { removal_commit: null })).toMatchObject({ action: "none" });
    const dry = await cli("cleanup", dir, "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect((await store.head("_lakewarden/head")).etag).toBe(before.etag);
  });
});
