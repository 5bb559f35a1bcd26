/**
 * `serve`'s engine on a lake of two Iceberg tables: one written by Spark (`v<N>.metadata.json`
 * and a version hint, the spark-bunnies fixture) and one written by Athena for a catalog
 * (`NNNNN-uuid.metadata.json`, the athena-example fixture, with two commits appended as a catalog
 * writer names them). serve has no catalog to ask, so the catalog's table is set aside with one
 * line, once, and never looked at again; the Spark table is followed, each poll of it one LIST of
 * `metadata/` and the hint (the loader's lookup from the version last seen), no metadata file read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeStoredHead } from "../../lib/head/stored-head.ts";
import { LakeServer, type ServeEvent } from "../../lib/serve/lake-server.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { appendCatalogCommits, athenaCatalogFiles } from "../support/catalog-commits.ts";
import { appendSnapshot, copyIcebergFixture, listFiles, type FixtureCopy } from "../support/iceberg-fixtures.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { cp, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Waits (without judging how long it took) until `done` holds; fails saying what was awaited. */
async function until(done: () => boolean, what: string, events: ServeEvent[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}; events:\n${events.map((e) => JSON.stringify(e)).join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Requests serve makes inside each table (the lake store's scopes), by table folder. */
function countRequests(store: LocalStore): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const scope = store.scope.bind(store);
  store.scope = (prefix) => {
    const scoped = scope(prefix);
    const log = seen.get(prefix) ?? [];
    seen.set(prefix, log);
    const list = scoped.list.bind(scoped);
    scoped.list = (listed, options) => {
      log.push(`LIST ${listed}`);
      return list(listed, options);
    };
    const get = scoped.get.bind(scoped);
    scoped.get = (key, range) => {
      log.push(`GET ${key}`);
      return get(key, range);
    };
    return scoped;
  };
  return seen;
}

describe("serve on a lake with an Iceberg table a catalog owns", () => {
  let lake: string;
  const copies: FixtureCopy[] = [];

  beforeAll(async () => {
    lake = await makeTempDir("serve-iceberg-");
    const athena = await copyIcebergFixture("athena-example");
    const spark = await copyIcebergFixture("spark-bunnies");
    copies.push(athena, spark);
    await appendCatalogCommits(athena.dir, athenaCatalogFiles());
    await cp(athena.dir, join(lake, "athena"), { recursive: true });
    await cp(spark.dir, join(lake, "bunnies"), { recursive: true });
  });

  afterAll(async () => {
    await Promise.all(copies.map((c) => c.remove()));
    await removeDir(lake);
  });

  it("sets the catalog's table aside with one line, once; follows the Spark table from its last version, reading no metadata file while nothing changes", async () => {
    const events: ServeEvent[] = [];
    const store = new LocalStore(lake);
    const requests = countRequests(store);
    // Cleanup runs when the test asks (cleanAll), so every other request counted is a poll's.
    const server = await LakeServer.start({ location: lake, store, pollIntervalMs: 30, cleanupEveryMs: null, onEvent: (event) => events.push(event) });
    const athena = openStore(join(lake, "athena")).uri;
    const bunnies = openStore(join(lake, "bunnies")).uri;
    try {
      await until(() => events.some((e) => e.type === "head" && e.table === bunnies), "the Spark table's head", events);
      await until(() => events.some((e) => e.type === "table-ignored"), "the catalog's table set aside", events);
      await server.idle();
      // From here on: polls and cleanups of the Spark table only.
      const athenaSeen = (requests.get("athena") ?? []).length;
      const from = (requests.get("bunnies") ?? []).length;
      const polled = () => (requests.get("bunnies") ?? []).slice(from).filter((r) => r === "LIST metadata/").length;
      await until(() => polled() >= 5, "five polls of the Spark table", events);
      // The listing shows the head's metadata file unchanged: nothing more is read.
      const polls = (requests.get("bunnies") ?? []).slice(from);
      expect(polls.filter((r) => r.endsWith(".metadata.json"))).toEqual([]);
      await server.cleanAll();
      expect(events.filter((e) => e.type === "cleanup").map((e) => e.table)).toEqual([bunnies]);
      expect((requests.get("athena") ?? []).length).toBe(athenaSeen);

      // A new commit to the Spark table is still found and followed.
      await appendSnapshot(join(lake, "bunnies"), { files: [] });
      await until(() => events.filter((e) => e.type === "head" && e.table === bunnies).length >= 2, "the Spark table's next head", events);
    } finally {
      await server.stop();
    }
    const ignored = events.filter((e) => e.type === "table-ignored");
    expect(ignored).toEqual([{ type: "table-ignored", table: athena, reason: expect.stringContaining("metadata files are named NNNNN-uuid (newest metadata/00003-") }]);
    expect(server.tables).toEqual(["bunnies"]);
    const failures = events.filter((e) => e.type === "head-failed" || e.type === "error" || e.type === "cleanup-failed");
    expect(failures).toEqual([]);
    expect((await listFiles(join(lake, "athena"))).filter((key) => key.startsWith("_lakewarden/"))).toEqual([]);
    expect(await probeStoredHead(openStore(bunnies))).not.toBeNull();
  });

  it("a version hint beside catalog-named files: followed as before, its cleanup (which needs the catalog) skipped with one line, once", async () => {
    const hinted = await makeTempDir("serve-iceberg-hint-");
    try {
      await cp(join(lake, "athena"), join(hinted, "athena"), { recursive: true });
      await writeFile(join(hinted, "athena", "metadata", "version-hint.text"), "3");
      const events: ServeEvent[] = [];
      const server = await LakeServer.start({ location: hinted, pollIntervalMs: 3_600_000, cleanupEveryMs: null, onEvent: (event) => events.push(event) });
      const table = openStore(join(hinted, "athena")).uri;
      try {
        await server.idle();
        expect(events.filter((e) => e.type === "head")).toEqual([expect.objectContaining({ table, version: 3 })]);
        await server.cleanAll();
        await server.cleanAll();
      } finally {
        await server.stop();
      }
      const skipped = events.filter((e) => e.type === "cleanup-skipped");
      expect(skipped).toEqual([{ type: "cleanup-skipped", table, reason: expect.stringContaining("metadata files are named NNNNN-uuid") }]);
      expect(events.filter((e) => e.type === "table-ignored" || e.type === "cleanup-failed" || e.type === "error")).toEqual([]);
    } finally {
      await removeDir(hinted);
    }
  });
});
