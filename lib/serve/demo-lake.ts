/**
 * The demo lake `lakewarden serve` runs with no location: a real Lance table, written and
 * committed to every few seconds by LanceDB itself, so there is something for the heads to
 * follow and for cleanup to remove.
 *
 * Why LanceDB: a Lance dataset is only valid if a Lance writer made it (manifests, data files,
 * protobuf and file format versions); hand-made bytes would demo a fake. LanceDB is a dev
 * dependency (the tests' writer), so the demo loads it on demand and, where it is not
 * installed, says so and points at serving a real location instead.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";

export const DEMO_TABLE = "events";

export class DemoUnavailableError extends Error {
  constructor(cause: unknown) {
    super(
      "the demo lake is written by @lancedb/lancedb, a dev dependency that is not installed here; " +
        "install it (npm ci, with dev dependencies) or serve your own lake: lakewarden serve <dir | s3://bucket/prefix>",
      { cause },
    );
    this.name = "DemoUnavailableError";
  }
}

export interface DemoCommit {
  version: number;
  /** "create" (a new demo table), "open" (an existing one, reopened: no commit), or the commit's operation. */
  operation: string;
  rows: number;
}

export interface DemoWriter {
  /** The demo table's directory. */
  tablePath: string;
  /** Reports the table as created or reopened, then commits every `commitEveryMs` until stopped. */
  begin(): Promise<void>;
  stop(): Promise<void>;
}

type LanceDb = typeof import("@lancedb/lancedb");

/** The operations the writer cycles through: appends, a delete (deletion file) and an overwrite (unreferenced files). */
const CYCLE = ["append", "append", "delete", "overwrite"] as const;

export async function startDemoLake(dir: string, options: { commitEveryMs: number; onCommit(commit: DemoCommit): void; onError(error: unknown): void }): Promise<DemoWriter> {
  let lancedb: LanceDb;
  try {
    lancedb = await import("@lancedb/lancedb");
  } catch (error) {
    throw new DemoUnavailableError(error);
  }
  await mkdir(dir, { recursive: true });
  const db = await lancedb.connect(dir);
  let nextId = 0;
  const rows = (count: number): Record<string, unknown>[] =>
    Array.from({ length: count }, () => {
      const id = nextId++;
      return { id, kind: ["click", "view", "buy"][id % 3], amount: (id * 7) % 100 };
    });
  const existed = (await db.tableNames()).includes(DEMO_TABLE);
  const table = existed ? await db.openTable(DEMO_TABLE) : await db.createTable(DEMO_TABLE, rows(10));
  // Ids need not be unique for the demo; this keeps them apart across restarts anyway.
  nextId = 1000 * (await table.version());

  let step = 0;
  let writing: Promise<void> = Promise.resolve();
  const commit = async (): Promise<void> => {
    const operation = CYCLE[step++ % CYCLE.length]!;
    if (operation === "append") await table.add(rows(5));
    else if (operation === "delete") await table.delete(`id % 4 = ${step % 4}`);
    else await table.add(rows(10), { mode: "overwrite" });
    options.onCommit({ version: await table.version(), operation, rows: await table.countRows() });
  };
  let timer: ReturnType<typeof setInterval> | undefined;

  return {
    tablePath: join(dir, `${DEMO_TABLE}.lance`),
    async begin() {
      options.onCommit({ version: await table.version(), operation: existed ? "open" : "create", rows: await table.countRows() });
      timer ??= setInterval(() => {
        writing = writing.then(commit).catch((error: unknown) => options.onError(error));
      }, options.commitEveryMs);
    },
    async stop() {
      clearInterval(timer);
      await writing;
      table.close();
      db.close();
    },
  };
}
