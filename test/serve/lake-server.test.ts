/**
 * `serve`'s engine on a lake a LanceDB writer keeps committing to: on disk (file watching only:
 * polling is set far beyond the test's life) and on S3 (moto, polling). The head must follow
 * every commit, and cleanup must run on its schedule and leave the table readable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeStoredHead } from "../../lib/head/stored-head.ts";
import { LakeServer, type ServeEvent } from "../../lib/serve/lake-server.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { startMotoServer, type MotoHandle } from "../support/moto.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

/** Waits (without judging how long it took) for an event matching `test`; fails listing what came. */
async function eventMatching<E extends ServeEvent>(events: ServeEvent[], test: (event: ServeEvent) => event is E, what: string): Promise<E> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = events.find(test);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} event; got:\n${events.map((e) => JSON.stringify(e)).join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const headAt =
  (version: number, table: string) =>
  (e: ServeEvent): e is Extract<ServeEvent, { type: "head" }> =>
    e.type === "head" && e.table === table && e.version === version;
const cleanupDone = (e: ServeEvent): e is Extract<ServeEvent, { type: "cleanup" }> => e.type === "cleanup" && e.status === "completed" && e.versionsRemoved.length > 0;

describe("serve on a local directory", () => {
  let lake: string;
  let dataset: LanceDataset;

  beforeAll(async () => {
    lake = await makeTempDir("serve-local-");
    dataset = await buildLanceDataset({ dbUri: lake, tableName: "events", steps: [{ op: "create", rows: 5 }] });
  });

  afterAll(async () => {
    dataset?.close();
    await removeDir(lake);
  });

  it("writes the head after each commit and cleans up on its schedule", async () => {
    const events: ServeEvent[] = [];
    const server = await LakeServer.start({
      location: lake,
      pollIntervalMs: 3_600_000, // file events alone must drive the heads
      cleanupEveryMs: 400,
      cleanupSettings: { olderThanMs: 0, retainVersions: 1 },
      onEvent: (event) => events.push(event),
    });
    try {
      const table = openStore(`${lake}/events.lance`).uri;
      expect(events[0]).toMatchObject({ type: "started", tables: ["events.lance"], watching: "files" });
      await eventMatching(events, headAt(1, table), "head for version 1");
      for (const step of [
        { op: "append", rows: 3 },
        { op: "overwrite", rows: 4 },
        { op: "append", rows: 2 },
      ] as const) {
        await dataset.apply([step]);
        const version = await dataset.table.version();
        await eventMatching(events, headAt(version, table), `head for version ${version}`);
        const stored = await probeStoredHead(openStore(table));
        expect(stored?.tableVersion).toBeGreaterThanOrEqual(version);
      }
      const cleanup = await eventMatching(events, cleanupDone, "completed cleanup");
      expect(cleanup.table).toBe(table);
      const reopened = await dataset.db.openTable("events");
      expect(await reopened.countRows()).toBe(6);
      reopened.close();
      // A table created while serving is found by its first commit.
      const second = await buildLanceDataset({ dbUri: `${lake}/more`, tableName: "late", steps: [{ op: "create", rows: 1 }] });
      second.close();
      await eventMatching(events, headAt(1, openStore(`${lake}/more/late.lance`).uri), "head for a new table");
    } finally {
      await server.stop();
    }
    expect(events.at(-1)).toEqual({ type: "stopped" });
    expect(events.filter((e) => e.type === "head-failed" || e.type === "error" || e.type === "cleanup-failed")).toEqual([]);
  });
});

describe("serve on a table with a branch", () => {
  let lake: string;
  let dataset: LanceDataset;

  beforeAll(async () => {
    lake = await makeTempDir("serve-branch-");
    dataset = await buildLanceDataset({
      dbUri: lake,
      tableName: "events",
      steps: [
        { op: "create", rows: 5 },
        { op: "append", rows: 2 },
      ],
    });
  });

  afterAll(async () => {
    dataset?.close();
    await removeDir(lake);
  });

  it("sets the branch's folder aside once: no head inside it, no cleanup of it as a table", async () => {
    const events: ServeEvent[] = [];
    const server = await LakeServer.start({
      location: lake,
      pollIntervalMs: 3_600_000,
      cleanupEveryMs: null,
      onEvent: (event) => events.push(event),
    });
    const branchUri = openStore(`${lake}/events.lance/tree/exp`).uri;
    try {
      const branch = await (await dataset.table.branches()).create("exp", "main", await dataset.table.version());
      await branch.add([{ id: 900, name: "on-branch", score: 1 }]);
      await branch.add([{ id: 901, name: "on-branch", score: 2 }]);
      branch.close();
      const ignored = (e: ServeEvent): e is Extract<ServeEvent, { type: "table-ignored" }> => e.type === "table-ignored";
      expect((await eventMatching(events, ignored, "table-ignored")).table).toBe(branchUri);
      await server.idle();
      await server.cleanAll();
      expect(server.tables).toEqual(["events.lance"]);
    } finally {
      await server.stop();
    }
    expect(events.filter((e) => e.type === "table-ignored")).toHaveLength(1);
    expect(events.filter((e) => e.type === "head-failed" || e.type === "error" || e.type === "cleanup-failed")).toEqual([]);
    await expect(probeStoredHead(openStore(branchUri))).resolves.toBeNull();
  });
});

describe("serve on an S3 prefix", () => {
  let moto: MotoHandle;
  let dataset: LanceDataset;

  beforeAll(async () => {
    moto = await startMotoServer({ buckets: ["serve-lake"] });
    Object.assign(process.env, moto.awsEnv);
    dataset = await buildLanceDataset({ dbUri: "s3://serve-lake/lake", tableName: "orders", storageOptions: moto.lanceStorageOptions, steps: [{ op: "create", rows: 3 }] });
  });

  afterAll(async () => {
    dataset?.close();
    await moto?.stop();
  });

  it("polls for commits and follows each with the head", async () => {
    const events: ServeEvent[] = [];
    const server = await LakeServer.start({
      location: "s3://serve-lake/lake",
      store: openStore("s3://serve-lake/lake"),
      pollIntervalMs: 100,
      cleanupEveryMs: null,
      onEvent: (event) => events.push(event),
    });
    try {
      expect(events[0]).toMatchObject({ type: "started", tables: ["orders.lance"], watching: "polling" });
      const table = "s3://serve-lake/lake/orders.lance";
      await eventMatching(events, headAt(1, table), "head for version 1");
      for (let i = 0; i < 2; i++) {
        await dataset.apply([{ op: "append", rows: 1 }]);
        await eventMatching(events, headAt(await dataset.table.version(), table), "head after a commit");
      }
    } finally {
      await server.stop();
    }
    expect(events.filter((e) => e.type === "head-failed" || e.type === "error")).toEqual([]);
  });
});
