/**
 * Delta's removal plan walks the candidate listing; it is not handed an array. The pipeline's
 * listing is in spilled pages, and the plan used to get all of it copied into one array (every
 * data file of the table as an object). Given a listing it can only walk, the plan is the same
 * as before, file for file, and the run deletes the same keys.
 */
import { afterAll, describe, expect, it } from "vitest";
import { deltaFormat } from "../../../lib/formats/delta/delta-format.ts";
import type { FormatPlannedRemoval, TableFormat } from "../../../lib/formats/table-format.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import type { ObjectInfo } from "../../../lib/store/object-store.ts";
import { copyFixture } from "../../support/fixtures.ts";
import { removeDir } from "../../support/lance-datasets.ts";
import { aggressive } from "../../maintenance/damage/damage.ts";
import { listKeys, setAllTimes } from "./log-surgery.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDir(dir);
});

/** Delta, its plan given the listing as something that can only be walked; counts the walks. */
function walkOnly(): { format: TableFormat; walks: () => number } {
  const plan = deltaFormat.removal as FormatPlannedRemoval;
  let walks = 0;
  const format: TableFormat = {
    ...deltaFormat,
    removal: {
      kind: "format-plan",
      planRemoval(store, input) {
        const listing = input.listing;
        const walkable: Iterable<ObjectInfo> = {
          [Symbol.iterator]() {
            walks++;
            return listing[Symbol.iterator]();
          },
        };
        return plan.planRemoval(store, { ...input, listing: walkable });
      },
    },
  };
  return { format, walks: () => walks };
}

/** Every file 60 days old, the same instant in each copy (the plan's reasons name the times). */
const AGED = new Date(Date.now() - 60 * 86_400_000);

async function agedCopy(name: string): Promise<string> {
  const dir = await copyFixture("delta", name);
  dirs.push(dir);
  await setAllTimes(dir, AGED);
  return dir;
}

describe("Delta's plan walks the listing", () => {
  it.each(["checkpoint-v2-table", "basic-dv-with-checkpoint", "delta-0.2.0"])("%s: the same plan and the same deletes from a listing it can only walk", async (name) => {
    const [plain, walked] = [await agedCopy(name), await agedCopy(name)];
    const expected = await runCleanup(new LocalStore(plain), { format: deltaFormat, ...aggressive() });
    const { format, walks } = walkOnly();
    const report = await runCleanup(new LocalStore(walked), { format, ...aggressive() });
    expect(walks()).toBeGreaterThan(0);
    expect(report.status).toBe("completed");
    expect(report.versions_removed).toEqual(expected.versions_removed);
    expect(report.files.map((file) => [file.key, file.action, file.reason])).toEqual(expected.files.map((file) => [file.key, file.action, file.reason]));
    expect(expected.files.filter((file) => file.action === "delete").length).toBeGreaterThan(0);
    const left = (keys: string[]) => keys.filter((key) => !key.startsWith("_lakewarden/"));
    expect(left(await listKeys(walked))).toEqual(left(await listKeys(plain)));
  });
});
