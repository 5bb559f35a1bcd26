/**
 * A writer's metadata commit that changes no snapshot and no ref (a property change) lands while
 * cleanup runs, after it read the table: nothing makes the run plan again, and the new metadata
 * file is young and named by nothing the plan read. It is the table's current metadata all the
 * same (Iceberg commits create-only), so cleanup must never delete it, even with
 * --delete-unverified (which takes young files no commit names, not commits).
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { icebergFormat } from "../../../lib/formats/iceberg/iceberg-format.ts";
import { DAY_MS } from "../../../lib/formats/iceberg/retention.ts";
import { runCleanup } from "../../../lib/maintenance/run-cleanup.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import type { ListOptions, ObjectInfo, ObjectStore } from "../../../lib/store/object-store.ts";
import { copyIcebergFixture, fileExists, rewriteMetadata } from "../../support/iceberg-fixtures.ts";
import { currentMetadataName, everySnapshotReads } from "../../support/iceberg-histories.ts";

/** The store cleanup runs on: the first listing of `metadata/` (the candidate listing) runs `before` first. */
function writerBeforeListing(inner: ObjectStore, before: () => Promise<void>): ObjectStore {
  let done = false;
  const store = Object.create(inner) as ObjectStore;
  store.list = (prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> => {
    if (prefix !== "metadata/" || options?.delimiter !== undefined || done) return inner.list(prefix, options);
    done = true;
    return (async function* () {
      await before();
      yield* inner.list(prefix, options);
    })();
  };
  return store;
}

describe("Iceberg cleanup while a writer commits metadata", () => {
  it("a property-only commit landing after the plan read the table stays, --delete-unverified or not", async () => {
    const copy = await copyIcebergFixture("spark-bunnies", { ageMs: 30 * DAY_MS });
    onTestFinished(copy.remove);
    // No snapshot is due (an expiry commit would notice the writer's commit and stop the run):
    // cleanup goes straight to the files no kept snapshot names.
    await rewriteMetadata(copy.dir, (json) => {
      json.properties = { ...(json.properties as object), "history.expire.min-snapshots-to-keep": "100" } as never;
    });
    let written = "";
    const store = writerBeforeListing(new LocalStore(copy.dir), async () => {
      written = await rewriteMetadata(copy.dir, (json) => {
        json.properties = { ...(json.properties as object), "owner": "someone" } as never;
      });
    });
    const report = await runCleanup(store, { format: icebergFormat, now: () => new Date(), settings: { deleteUnverified: true } });
    expect(written).toBe("metadata/v7.metadata.json");
    expect(report.files.filter((f) => f.action === "delete").map((f) => f.key)).not.toContain(written);
    expect(await fileExists(copy.dir, written)).toBe(true);
    expect(await currentMetadataName(copy.dir)).toBe("v7.metadata.json");
    await everySnapshotReads(copy.dir);
  });
});
