import { describe, expect, it } from "vitest";
import type { FileReference } from "../../lib/model/file-reference.ts";
import { ReferenceTable } from "../../lib/maintenance/version-references.ts";

/** Versions as a growing Lance table names them: every fragment so far, one added a version, every third one compacted away. */
function versionsOfGrowingTable(versions: number, fragments: number): FileReference[][] {
  const out: FileReference[][] = [];
  for (let v = 1; v <= versions; v++) {
    const list: FileReference[] = [{ path: `_versions/${v}.manifest`, role: "commit", size: 100 + v }];
    for (let f = 0; f < fragments + v; f++) if (f % 3 !== 0 || f >= v) list.push({ path: `data/${f}.lance`, role: "data", size: 1000 + f });
    out.push(list);
  }
  return out;
}

describe("ReferenceTable: what versions name, held once per file", () => {
  it("reads every version back as the format gave it, in its order, whichever order versions are read in", () => {
    const lists = versionsOfGrowingTable(40, 200);
    const table = new ReferenceTable();
    const order = lists.map((_, i) => i).sort((a, b) => ((a * 7919) % 41) - ((b * 7919) % 41));
    const held = new Map(order.map((i) => [i, table.encode(lists[i]!)]));
    for (const [i, references] of held) {
      expect(references.length).toBe(lists[i]!.length);
      expect(references.list()).toEqual(lists[i]);
      const walked: FileReference[] = [];
      references.forEach((reference) => {
        walked.push(reference);
      });
      expect(walked).toEqual(lists[i]);
    }
  });

  it("reads back versions whose objects are shared with other versions (as Lance's reader gives them), at the same places or moved", () => {
    const fresh = versionsOfGrowingTable(30, 50);
    const objects = new Map<string, FileReference>();
    const lists = fresh.map((list, v) =>
      list
        .map((reference) => {
          if (!objects.has(reference.path)) objects.set(reference.path, reference);
          return objects.get(reference.path)!;
        })
        .reverse()
        .slice(0, v % 4 === 0 ? undefined : -1 - (v % 3)),
    );
    // The same objects in another order, and one re-described (another size) under a shared object's path.
    lists.push([...lists[10]!].reverse(), [{ path: "data/7.lance", role: "data", size: 1 }, ...lists[11]!]);
    const table = new ReferenceTable();
    const order = lists.map((_, i) => i).sort((a, b) => ((a * 7919) % 37) - ((b * 7919) % 37));
    const held = new Map(order.map((i) => [i, table.encode(lists[i]!)]));
    for (const [i, references] of held) expect(references.list()).toEqual(lists[i]);
    expect(table.size).toBe(new Set(lists.flat().map((reference) => `${reference.path} ${reference.role} ${reference.size}`)).size);
  });

  it("holds a file once however many versions name it, and a version in a few runs of ids", () => {
    const lists = versionsOfGrowingTable(120, 1000);
    const table = new ReferenceTable();
    const held = lists.map((list) => table.encode(list));
    const distinct = new Set(lists.flat().map((reference) => reference.path)).size;
    expect(table.size).toBe(distinct);
    const references = lists.reduce((sum, list) => sum + list.length, 0);
    const runs = held.reduce((sum, version) => sum + version.runCount, 0);
    // 120 versions × ~1,040 references each, in runs that grow with what changed, not with what each names.
    expect(references).toBeGreaterThan(120_000);
    expect(runs).toBeLessThan(references / 10);
  });

  it("holds a table rewritten in place (the same fragments, one replaced every tenth version) in one or two runs a version", () => {
    const lists: FileReference[][] = [];
    for (let v = 0; v < 100; v++) {
      const replaced = Math.floor(v / 10);
      lists.push(Array.from({ length: 2000 }, (_, f) => ({ path: f < replaced ? `data/${f}-compacted.lance` : `data/${f}.lance`, role: "data" })));
    }
    const table = new ReferenceTable();
    const held = lists.map((list) => table.encode(list));
    expect(table.size).toBe(2000 + 9);
    expect(Math.max(...held.map((version) => version.runCount))).toBe(2);
  });

  it("never holds more runs than references (a version whose every file is new is one run; unrelated files, one run each)", () => {
    const table = new ReferenceTable();
    const fresh = table.encode(Array.from({ length: 100 }, (_, f) => ({ path: `a/${f}`, role: "data" })));
    expect(fresh.runCount).toBe(1);
    const scattered = table.encode(Array.from({ length: 50 }, (_, f) => ({ path: `a/${(f * 37) % 100}`, role: "data" })));
    expect(scattered.runCount).toBeLessThanOrEqual(scattered.length);
  });

  it("keeps a path another version describes otherwise (another size or role) as its own entry", () => {
    const table = new ReferenceTable();
    const first = table.encode([
      { path: "data/a.parquet", role: "data", size: 10 },
      { path: "data/b.parquet", role: "data" },
    ]);
    const second = table.encode([
      { path: "data/a.parquet", role: "data", size: 12 },
      { path: "data/b.parquet", role: "delete" },
      { path: "data/a.parquet", role: "data", size: 10 },
    ]);
    expect(first.list()).toEqual([
      { path: "data/a.parquet", role: "data", size: 10 },
      { path: "data/b.parquet", role: "data" },
    ]);
    expect(second.list()).toEqual([
      { path: "data/a.parquet", role: "data", size: 12 },
      { path: "data/b.parquet", role: "delete" },
      { path: "data/a.parquet", role: "data", size: 10 },
    ]);
    expect(table.size).toBe(4);
    expect(table.encode([]).list()).toEqual([]);
  });

  it("keeps only path, role and size of what a format gives", () => {
    const table = new ReferenceTable();
    const given = { path: "data/x.lance", role: "data", size: 5, extra: "not the pipeline's" };
    expect(table.encode([given]).list()).toEqual([{ path: "data/x.lance", role: "data", size: 5 }]);
  });
});
