import { RecordBatch, Schema, Table, tableFromIPC, tableToIPC } from "apache-arrow";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { archiveAndHold, archiveVersions, loadNewestCheckpointAfter } from "../../lib/checkpoint/archive.ts";
import { encodeCheckpoint } from "../../lib/checkpoint/codec.ts";
import { UnsupportedCheckpointError } from "../../lib/checkpoint/errors.ts";
import { CHECKPOINT_METADATA } from "../../lib/checkpoint/schema.ts";
import { mergeHistory } from "../../lib/checkpoint/history.ts";
import { checkpointKey } from "../../lib/model/layout.ts";
import { listCheckpointFiles, loadNewestCheckpoint, readCheckpoint } from "../../lib/checkpoint/load.ts";
import { cleanupOldCheckpoints } from "../../lib/checkpoint/prune.ts";
import { readArchivedHistory, writeSegment } from "../../lib/checkpoint/segments.ts";
import type { DamageNote } from "../../lib/checkpoint/damaged.ts";
import { LocalStore } from "../../lib/store/local-store.ts";
import type { ObjectStore, PutOptions } from "../../lib/store/object-store.ts";
import { makeTempDir, removeDir } from "../support/lance-datasets.ts";
import { versionRecord } from "./records.ts";

let dir: string;
let store: LocalStore;

beforeEach(async () => {
  dir = await makeTempDir("lw-checkpoint-");
  store = new LocalStore(dir);
});
afterEach(() => removeDir(dir));

const NOW = new Date("2026-11-01T00:00:00Z");

function archiveInput(records = [1, 2, 3].map((v) => versionRecord(v)), live = [1, 2, 3]) {
  return { previous: null, records, liveVersions: new Set(live), taggedVersions: new Set<number>(), tableFormat: "lance", now: NOW };
}

/** Records every put's options, to check how checkpoints are written. */
function recordingPuts(inner: ObjectStore): { store: ObjectStore; puts: { key: string; options: PutOptions | undefined }[] } {
  const puts: { key: string; options: PutOptions | undefined }[] = [];
  const wrapped = Object.create(inner) as ObjectStore;
  wrapped.put = (key, body, options) => {
    puts.push({ key, options });
    return inner.put(key, body, options);
  };
  return { store: wrapped, puts };
}

describe("archive_versions", () => {
  it("writes a new checkpoint create-only, named by the newest version", async () => {
    const { store: spied, puts } = recordingPuts(store);
    const result = await archiveVersions(spied, archiveInput());
    expect(result).toEqual({ status: "written", archived: null, key: checkpointKey(3), version: 3, rows: 3, cleanedUpRows: 0 });
    expect(puts).toEqual([{ key: checkpointKey(3), options: expect.objectContaining({ ifNoneMatch: "*" }) }]);
    const loaded = await loadNewestCheckpoint(store);
    expect(loaded.checkpoint?.records.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(loaded.checkpoint?.datasetCreatedAtMillis).toBe(versionRecord(1).timestamp_millis);
  });

  it("after an archive, the newest checkpoint is what it wrote, taken from memory while the file is unchanged", async () => {
    const first = await archiveAndHold(store, archiveInput());
    const before = store.stats.snapshot().get;
    const held = await loadNewestCheckpointAfter(store, first.held);
    expect(store.stats.snapshot().get).toBe(before);
    const read = await loadNewestCheckpoint(store);
    expect(held).toEqual(read);
    // Merging with it again (cleanup's second archive) replaces the file on its ETag.
    const second = await archiveAndHold(store, { ...archiveInput(), previous: held.checkpoint, liveVersions: new Set([3]) });
    expect(second.result).toMatchObject({ status: "replaced", cleanedUpRows: 2 });
    expect(await loadNewestCheckpointAfter(store, second.held)).toEqual(await loadNewestCheckpoint(store));

    // Replaced by another writer since (a newer ETag): read from the store, not from memory.
    const other = await archiveAndHold(store, { ...archiveInput(), previous: (await loadNewestCheckpoint(store)).checkpoint, liveVersions: new Set([]) });
    expect(other.result.status).toBe("replaced");
    const after = await loadNewestCheckpointAfter(store, second.held);
    expect(after.checkpoint?.records.every((r) => r.is_cleaned_up)).toBe(true);
    expect(after).toEqual(await loadNewestCheckpoint(store));
    // A newer checkpoint written by someone else: that one is the newest.
    await archiveVersions(
      store,
      archiveInput(
        [1, 2, 3, 4].map((v) => versionRecord(v)),
        [1, 2, 3, 4],
      ),
    );
    expect((await loadNewestCheckpointAfter(store, other.held)).checkpoint?.version).toBe(4);
  });

  it("writes nothing when the history is unchanged", async () => {
    await archiveVersions(store, archiveInput());
    const previous = (await loadNewestCheckpoint(store)).checkpoint;
    const { store: spied, puts } = recordingPuts(store);
    const again = await archiveVersions(spied, { ...archiveInput(), previous });
    expect(again.status).toBe("unchanged");
    expect(puts).toEqual([]);
  });

  it("replaces a same-version checkpoint with If-Match when versions were removed since", async () => {
    await archiveVersions(store, archiveInput());
    const previous = (await loadNewestCheckpoint(store)).checkpoint!;
    const { store: spied, puts } = recordingPuts(store);
    const result = await archiveVersions(spied, { ...archiveInput(), previous, liveVersions: new Set([3]) });
    expect(result.status).toBe("replaced");
    // The file it merged with is the one of that name: one replace on its ETag, no create-only attempt.
    expect(puts.map((p) => p.options)).toEqual([expect.objectContaining({ ifMatch: previous.etag })]);
    const reloaded = (await loadNewestCheckpoint(store)).checkpoint!;
    expect(reloaded.records.map((r) => [r.version, r.is_cleaned_up])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
  });

  it("a same-version checkpoint replaced since it was read is read again and merged, not overwritten", async () => {
    await archiveVersions(store, archiveInput());
    const stale = (await loadNewestCheckpoint(store)).checkpoint!;
    // Another run removed version 1 in between: the file's ETag moved on.
    await archiveVersions(store, { ...archiveInput(), previous: stale, liveVersions: new Set([2, 3]) });
    const { store: spied, puts } = recordingPuts(store);
    const result = await archiveVersions(spied, { ...archiveInput(), previous: stale, liveVersions: new Set([3]) });
    expect(result.status).toBe("replaced");
    // The stale ETag fails; the file is read again and the merge replaces it on its new ETag.
    expect(puts.length).toBeGreaterThan(1);
    expect(puts[0]!.options).toEqual(expect.objectContaining({ ifMatch: stale.etag }));
    expect(puts.at(-1)!.options).toEqual(expect.objectContaining({ ifMatch: expect.not.stringMatching(stale.etag) }));
    const reloaded = (await loadNewestCheckpoint(store)).checkpoint!;
    expect(reloaded.records.map((r) => [r.version, r.is_cleaned_up])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
  });

  it("keeps removed versions with is_cleaned_up and grows history across checkpoints", async () => {
    await archiveVersions(store, archiveInput());
    const previous = (await loadNewestCheckpoint(store)).checkpoint;
    // Versions 1-2 removed, 4-5 committed since; only 3-5 are read now.
    const records = [3, 4, 5].map((v) => versionRecord(v));
    const result = await archiveVersions(store, { ...archiveInput(records, [3, 4, 5]), previous });
    expect(result).toMatchObject({ status: "written", version: 5, rows: 5, cleanedUpRows: 2 });
    const latest = (await loadNewestCheckpoint(store)).checkpoint!;
    expect(latest.records.map((r) => [r.version, r.is_cleaned_up])).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, false],
      [5, false],
    ]);
  });

  it("caps rows at max entries, the oldest moved out down to half, and remembers the table's creation time", () => {
    const merged = mergeHistory({
      previous: null,
      records: [1, 2, 3, 4, 5].map((v) => versionRecord(v)),
      liveVersions: new Set([1, 2, 3, 4, 5]),
      taggedVersions: new Set([4]),
      nowMillis: 1,
      tableFormat: "lance",
      maxEntries: 3,
    });
    expect(merged.records.map((r) => r.version)).toEqual([4, 5]);
    expect(merged.overflow.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(merged.records.map((r) => r.is_tagged)).toEqual([true, false]);
    expect(merged.datasetCreatedFromVersion).toBe(1);
    const next = mergeHistory({
      previous: merged,
      records: [versionRecord(6)],
      liveVersions: new Set([6]),
      taggedVersions: new Set(),
      nowMillis: 2,
      tableFormat: "lance",
      maxEntries: 3,
    });
    expect(next.records.map((r) => r.version)).toEqual([4, 5, 6]);
    expect(next.overflow).toEqual([]);
    expect(next.datasetCreatedFromVersion).toBe(1);
    expect(next.datasetCreatedAtMillis).toBe(versionRecord(1).timestamp_millis);
  });

  it("heals a corrupt file under the name it needs with If-Match", async () => {
    await store.put(checkpointKey(3), new TextEncoder().encode("garbage"));
    const result = await archiveVersions(store, archiveInput());
    expect(result.status).toBe("replaced");
    expect((await readCheckpoint(store, { key: checkpointKey(3), version: 3 })).records).toHaveLength(3);
  });
});

describe("archive past a damaged newest checkpoint", () => {
  /** Checkpoint 2 (versions 1-2, readable) and a damaged checkpoint `damagedVersion`. */
  async function damagedAfterTwo(damagedVersion: number) {
    await archiveVersions(
      store,
      archiveInput(
        [1, 2].map((v) => versionRecord(v)),
        [1, 2],
      ),
    );
    await store.put(checkpointKey(damagedVersion), new TextEncoder().encode("not a checkpoint"));
    return loadNewestCheckpoint(store);
  }

  it("sets it aside, removes it from the folder, and remembers it while versions it covered may be missing", async () => {
    const loaded = await damagedAfterTwo(4);
    expect(loaded.skipped.map((s) => s.key)).toEqual([checkpointKey(4)]);
    // Versions 3-4 were removed meanwhile: only 5 is live, so what 4 held of 3-4 is lost.
    const result = await archiveVersions(store, { ...archiveInput([versionRecord(5)], [5]), previous: loaded.checkpoint, unreadable: loaded.skipped });
    expect(result).toMatchObject({ status: "written", key: checkpointKey(5), rows: 3 });
    expect(result.setAside).toEqual([expect.objectContaining({ file: checkpointKey(4), covered: { from: 1, through: 4 } })]);
    expect(new TextDecoder().decode((await store.get(result.setAside![0]!.set_aside)).body)).toBe("not a checkpoint");
    expect((await listCheckpointFiles(store)).map((f) => f.version)).toEqual([2, 5]);
    const written = (await loadNewestCheckpoint(store)).checkpoint!;
    expect(written.damaged).toEqual(result.setAside);
    // The next archive keeps the note while the file set aside is there, and drops it once it is deleted.
    const again = await archiveVersions(store, { ...archiveInput([versionRecord(6)], [5, 6]), previous: written });
    expect((await readCheckpoint(store, { key: again.key!, version: 6 })).damaged).toEqual(result.setAside);
    await store.deleteMany([result.setAside![0]!.set_aside]);
    const accepted = await archiveVersions(store, { ...archiveInput([versionRecord(6)], [5, 6]), previous: (await loadNewestCheckpoint(store)).checkpoint });
    expect(accepted.status).toBe("replaced");
    expect((await loadNewestCheckpoint(store)).checkpoint!.damaged).toBeUndefined();
  });

  it("remembers nothing when every version the damaged file covered is still held", async () => {
    const loaded = await damagedAfterTwo(4);
    const result = await archiveVersions(store, {
      ...archiveInput(
        [3, 4].map((v) => versionRecord(v)),
        [1, 2, 3, 4],
      ),
      previous: loaded.checkpoint,
      unreadable: loaded.skipped,
    });
    expect(result).toMatchObject({ status: "replaced", key: checkpointKey(4), rows: 4 });
    expect(result.setAside).toHaveLength(1);
    expect((await loadNewestCheckpoint(store)).checkpoint!.damaged).toBeUndefined();
  });
});

describe("an archive segment under the name a writer needs", () => {
  it("is kept when it reads whole, and set aside (not written over) when it does not", async () => {
    const rows = [1, 2, 3].map((v) => versionRecord(v));
    const key = await writeSegment(store, rows, "lance", NOW.getTime());
    const first = (await store.get(key!)).body;
    expect(await writeSegment(store, rows, "lance", NOW.getTime())).toBe(key);
    expect((await store.get(key!)).body).toEqual(first);

    const garbage = first.subarray(0, 100);
    await store.put(key!, garbage);
    const notes: DamageNote[] = [];
    expect(await writeSegment(store, rows, "lance", NOW.getTime(), (note) => notes.push(note))).toBe(key);
    expect(notes).toEqual([expect.objectContaining({ file: key, covered: { from: 1, through: 3 } })]);
    expect((await store.get(notes[0]!.set_aside)).body).toEqual(garbage);
    expect((await readArchivedHistory(store, { keys: [key!] })).records.map((r) => r.version)).toEqual([1, 2, 3]);
  });
});

describe("loading with fallback", () => {
  it("falls back to the previous checkpoint when the newest is corrupt", async () => {
    await archiveVersions(
      store,
      archiveInput(
        [1, 2].map((v) => versionRecord(v)),
        [1, 2],
      ),
    );
    await store.put(
      checkpointKey(3),
      encodeCheckpoint({
        version: 3,
        records: [1, 2, 3].map((v) => versionRecord(v)),
        createdAtMillis: 1,
        datasetCreatedAtMillis: null,
        datasetCreatedFromVersion: null,
        tableFormat: "lance",
        archiveSegments: [],
      }).subarray(0, 100),
    );
    const loaded = await loadNewestCheckpoint(store);
    expect(loaded.checkpoint?.version).toBe(2);
    expect(loaded.skipped).toEqual([{ key: checkpointKey(3), problem: expect.stringContaining(store.uriOf(checkpointKey(3))) }]);
  });

  it("a name that disagrees with the content is corrupt too", async () => {
    const bytes = encodeCheckpoint({
      version: 2,
      records: [versionRecord(1)],
      createdAtMillis: 1,
      datasetCreatedAtMillis: null,
      datasetCreatedFromVersion: null,
      tableFormat: "lance",
      archiveSegments: [],
    });
    await store.put(checkpointKey(7), bytes);
    const loaded = await loadNewestCheckpoint(store);
    expect(loaded.checkpoint).toBeNull();
    expect(loaded.skipped[0]!.problem).toMatch(/covers version 2 but its name says 7/);
  });

  it("no loadable checkpoint is an empty history, not an error", async () => {
    expect(await loadNewestCheckpoint(store)).toEqual({ checkpoint: null, skipped: [], files: [] });
    await store.put(checkpointKey(1), new Uint8Array([1, 2, 3]));
    const loaded = await loadNewestCheckpoint(store);
    expect(loaded.checkpoint).toBeNull();
    expect(loaded.skipped).toHaveLength(1);
  });
});

describe("a checkpoint in a newer format (written by a newer lakewarden)", () => {
  /** A valid checkpoint of versions 1..n whose file says it is format `formatVersion`. */
  function newerFormatCheckpoint(n: number, formatVersion = "3"): Uint8Array {
    const table = tableFromIPC(
      encodeCheckpoint({
        version: n,
        records: Array.from({ length: n }, (_, i) => versionRecord(i + 1)),
        createdAtMillis: 1,
        datasetCreatedAtMillis: null,
        datasetCreatedFromVersion: null,
        tableFormat: "lance",
        archiveSegments: [],
      }),
    );
    const schema = new Schema(table.schema.fields, new Map([...table.schema.metadata, [CHECKPOINT_METADATA.formatVersion, formatVersion]]));
    return tableToIPC(
      new Table(
        schema,
        table.batches.map((batch) => new RecordBatch(schema, batch.data)),
      ),
      "file",
    );
  }

  it("is not taken for a corrupt one: loading stops with an error naming the file, instead of falling back past its history", async () => {
    await archiveVersions(
      store,
      archiveInput(
        [1, 2].map((v) => versionRecord(v)),
        [1, 2],
      ),
    );
    await store.put(checkpointKey(3), newerFormatCheckpoint(3));
    const loading = loadNewestCheckpoint(store);
    await expect(loading).rejects.toThrow(UnsupportedCheckpointError);
    await expect(loading).rejects.toThrow(`${store.uriOf(checkpointKey(3))}: checkpoint format version "3" is newer than this reader's "2"`);
  });

  it("is never replaced by an older writer at the same version", async () => {
    const newer = newerFormatCheckpoint(3);
    await store.put(checkpointKey(3), newer);
    await expect(archiveVersions(store, archiveInput())).rejects.toThrow(UnsupportedCheckpointError);
    expect((await store.get(checkpointKey(3))).body).toEqual(newer);
  });

  it("an unreadable format version is corruption, as before", async () => {
    await store.put(checkpointKey(3), newerFormatCheckpoint(3, "one"));
    expect((await loadNewestCheckpoint(store)).skipped[0]!.problem).toMatch(/checkpoint format version "one" is not one of 1, 2/);
  });
});

describe("cleanup_old_checkpoints", () => {
  /** Checkpoints 1..n, each holding every version up to its own, as archives leave them. */
  async function growingCheckpoints(n: number): Promise<void> {
    for (let v = 1; v <= n; v++) {
      const previous = (await loadNewestCheckpoint(store)).checkpoint;
      await archiveVersions(store, { ...archiveInput([versionRecord(v)], range(1, v)), previous });
    }
  }
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it("keeps the newest two and anything asked to keep, and ignores foreign files", async () => {
    await growingCheckpoints(4);
    await store.put("_lakewarden/checkpoints/notes.txt", new Uint8Array([1]));
    const result = await cleanupOldCheckpoints(store, { keep: [checkpointKey(1)] });
    expect(result.pruned).toEqual([checkpointKey(2)]);
    expect((await listCheckpointFiles(store)).map((f) => f.version)).toEqual([1, 3, 4]);
    await store.head("_lakewarden/checkpoints/notes.txt");
    expect((await cleanupOldCheckpoints(store, { maxCheckpointFiles: 1 })).pruned.sort()).toEqual([checkpointKey(1), checkpointKey(3)]);
  });

  it("never deletes a checkpoint whose rows the newest does not hold", async () => {
    // Each file holds its own version only: 1 and 2 hold rows checkpoint 4 lacks.
    for (const v of [1, 2, 3, 4]) await archiveVersions(store, archiveInput([versionRecord(v)], [v]));
    const result = await cleanupOldCheckpoints(store);
    expect(result.pruned).toEqual([]);
    expect(result.problems).toEqual([
      expect.stringMatching(/00000000000000000002\.arrow: not pruned: versions 2 are in no newer checkpoint/),
      expect.stringMatching(/00000000000000000001\.arrow: not pruned: versions 1 are in no newer checkpoint/),
    ]);
    expect((await listCheckpointFiles(store)).map((f) => f.version)).toEqual([1, 2, 3, 4]);
  });

  it.each(["zero length", "truncated", "random bytes"] as const)("sets a damaged old checkpoint aside (%s) instead of deleting it", async (how) => {
    await growingCheckpoints(3);
    const bytes = (await store.get(checkpointKey(1))).body;
    const damaged = how === "zero length" ? new Uint8Array() : how === "truncated" ? bytes.subarray(0, bytes.length - 9) : bytes.map((_, i) => (i * 31 + 7) % 256);
    await store.put(checkpointKey(1), damaged);
    const dry = await cleanupOldCheckpoints(store, { dryRun: true });
    expect(dry.pruned).toEqual([]);
    expect((await store.get(checkpointKey(1))).body).toEqual(damaged);
    const result = await cleanupOldCheckpoints(store, { now: NOW });
    expect(result.pruned).toEqual([]);
    expect(result.setAside).toEqual([
      expect.objectContaining({ file: checkpointKey(1), set_aside: expect.stringMatching(/^_lakewarden\/damaged\/00000000000000000001\.arrow\./) }),
    ]);
    expect((await store.get(result.setAside![0]!.set_aside)).body).toEqual(damaged);
    expect((await listCheckpointFiles(store)).map((f) => f.version)).toEqual([2, 3]);
  });
});
