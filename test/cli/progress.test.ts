/** Progress shown on a terminal: `versions` counting version files read, and cleanup's counts never reading "N/0". */
import { afterAll, beforeAll, expect, it } from "vitest";
import { progressCount } from "../../lib/cli/commands/cleanup.ts";
import { BufferIO, type CliIO } from "../../lib/cli/io.ts";
import { withReadProgress } from "../../lib/cli/read-progress.ts";
import { lanceFormat } from "../../lib/formats/lance/lance-format.ts";
import { openStore } from "../../lib/store/open-store.ts";
import { readTimeline } from "../../lib/versions/timeline.ts";
import { buildLanceDataset, makeTempDir, removeDir, type LanceDataset } from "../support/lance-datasets.ts";

/** Collects output like BufferIO, but says it is a terminal. */
class TerminalIO implements CliIO {
  stdout = "";
  stderr = "";
  readonly interactive = true;
  out(text: string): void {
    this.stdout += text;
  }
  err(text: string): void {
    this.stderr += text;
  }
}

let dir: string;
let dataset: LanceDataset;
beforeAll(async () => {
  dir = await makeTempDir("lw-progress-");
  dataset = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 5 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
      { op: "append", rows: 5 },
    ],
  });
});
afterAll(async () => {
  dataset?.close();
  await removeDir(dir);
});

it("counts the version files read through the store, on a terminal only, and erases its line", async () => {
  const store = openStore(dataset.tableUri);
  const total = (await lanceFormat.listVersionFiles(store)).length;
  const io = new TerminalIO();
  const progress = withReadProgress(store, io, { prefix: lanceFormat.versionsPrefix, total, label: "reading version files", showAfterMs: 0, redrawEveryMs: 0 });
  const timeline = await readTimeline(progress.store, lanceFormat);
  progress.done();
  expect(timeline.records).toHaveLength(dataset.written.length);
  expect(io.stderr).toContain(`reading version files: ${total} of at most ${total} read`);
  expect(io.stderr.endsWith("\r\x1b[K")).toBe(true);
  expect(store.stats.snapshot().get).toBeGreaterThanOrEqual(total); // the counts still land in the store's stats

  const quiet = new BufferIO(); // not a terminal: nothing drawn
  const silent = withReadProgress(store, quiet, { prefix: lanceFormat.versionsPrefix, total, label: "x", showAfterMs: 0 });
  await readTimeline(silent.store, lanceFormat);
  silent.done();
  expect(quiet.stderr).toBe("");
});

it("cleanup's progress count never shows a total of 0, and grows a total the count passed", () => {
  expect(progressCount(4452, 0)).toBe("4452");
  expect(progressCount(12, undefined)).toBe("12");
  expect(progressCount(3, 10)).toBe("3/10");
  expect(progressCount(11, 10)).toBe("11/11");
});
