import { describe, expect, it } from "vitest";
import type { FileReference } from "../../lib/model/file-reference.ts";
import { ReferenceSet } from "../../lib/maintenance/references.ts";
import { ReferenceTable } from "../../lib/maintenance/version-references.ts";

/**
 * Versions naming data files, a folder, a path re-described (another size, then another role), a bad path, and a commit key added apart.
 * `shared`: one object per description for every version naming it, as Lance's reader gives them (ReferenceTable.encode reuses their ids).
 * `redescribed` false: the shared path keeps one description (the table then has no variants).
 */
function versions(shared = false, redescribed = true): FileReference[][] {
  const objects = new Map<string, FileReference>();
  const one = (reference: FileReference): FileReference => {
    if (!shared) return reference;
    const key = JSON.stringify(reference);
    if (!objects.has(key)) objects.set(key, reference);
    return objects.get(key)!;
  };
  const out: FileReference[][] = [];
  for (let v = 1; v <= 12; v++) {
    const list: FileReference[] = [];
    for (let f = Math.max(0, v - 6); f < v + 20; f++)
      list.push(f % 4 === 0 ? { path: `data/${f}.lance`, role: "data" } : { path: `data/${f}.lance`, role: "data", size: 1000 + f });
    list.push({ path: "_indices/idx/", role: "index" });
    list.push(
      v < 6 || !redescribed
        ? { path: "data/shared.lance", role: "data" }
        : v < 9
          ? { path: "data/shared.lance", role: "data", size: v < 8 ? 7 : 9 }
          : { path: "data/shared.lance", role: "delete" },
    );
    if (v === 4) list.push({ path: "../outside.lance", role: "data" });
    out.push(list.map(one));
  }
  return out;
}

function everything(set: ReferenceSet, keys: readonly string[]) {
  const all = [...set.all()];
  // has and paths answer what lookup and all do, without a Reference made.
  expect(keys.map((key) => set.has(key))).toEqual(keys.map((key) => set.lookup(key) !== undefined));
  expect([...set.paths()]).toEqual(all.map((reference) => reference.path));
  return { all, size: set.size, outside: set.outside, lookups: keys.map((key) => set.lookup(key) ?? null) };
}

describe("ReferenceSet over a scan's table: the same answers as over plain lists", () => {
  it.each([
    ["new objects every version", false, true],
    ["objects shared between versions", true, true],
    ["objects shared between versions, no path described twice", true, false],
  ])("gives every path its count, first role, first size, first versions, in the order first added, whichever order versions come in (%s)", (_, shared, redescribed) => {
    const lists = versions(shared, redescribed);
    const table = new ReferenceTable();
    // The scan reads versions in any order; sets are built in version order, two of them out of order here (the first one last).
    const encoded = [...lists.keys()].reverse().map((i) => [i, table.encode(lists[i]!)] as const);
    const byVersion = new Map(encoded);
    const order = [1, 2, 3, 7, 4, 5, 6, 8, 9, 10, 11, 0];
    const plain = new ReferenceSet();
    const columns = new ReferenceSet();
    for (const i of order) {
      plain.add(i + 1, { path: `_versions/${i + 1}.manifest`, role: "commit", size: 10 });
      plain.addAll(i + 1, lists[i]!);
      columns.add(i + 1, { path: `_versions/${i + 1}.manifest`, role: "commit", size: 10 });
      columns.addAll(i + 1, byVersion.get(i)!);
    }
    const keys = [...new Set(lists.flat().map((reference) => reference.path)), "_indices/idx/part-1", "_versions/3.manifest", "data/none.lance", "_indices/other/x"];
    const expected = everything(plain, keys);
    expect(expected.size).toBeGreaterThan(30);
    expect(everything(columns, keys)).toEqual(expected);
    // Size 9: version 8 is added before 6 and 7 (the first size added counts); version 1, added last, is still among the first.
    const sharedPath = redescribed ? { size: 9 } : {};
    expect(columns.lookup("data/shared.lance")).toEqual({ path: "data/shared.lance", kind: "data", versions: [1, 2, 3], count: 12, ...sharedPath });
    expect(columns.lookup("data/2.lance")).toEqual({ path: "data/2.lance", kind: "data", versions: [1, 2, 3], count: 8, size: 1002 });
    expect(columns.unresolvable()).toEqual([{ path: "../outside.lance", version: 4, kind: "unresolvable", reason: expect.stringContaining("the format gave a path that") }]);
  });

  it("finds a path asked for before any version named it once a later version does (the table's last answer is not kept past a new path)", () => {
    const table = new ReferenceTable();
    const set = new ReferenceSet();
    set.addAll(1, table.encode([{ path: "data/a.lance", role: "data", size: 1 }]));
    expect(set.has("data/b.lance")).toBe(false);
    expect(table.firstIdOf("data/b.lance")).toBeUndefined();
    set.addAll(2, table.encode([{ path: "data/b.lance", role: "data", size: 2 }]));
    expect(table.firstIdOf("data/b.lance")).toBe(1);
    expect(set.has("data/b.lance")).toBe(true);
    expect(set.lookup("data/b.lance")).toEqual({ path: "data/b.lance", kind: "data", versions: [2], count: 1, size: 2 });
  });

  it("counts runs of a table still growing between adds (its columns grown past their first capacity), looked up between adds", () => {
    const table = new ReferenceTable();
    const plain = new ReferenceSet();
    const columns = new ReferenceSet();
    const objects = new Map<number, FileReference>();
    const file = (f: number): FileReference => {
      if (!objects.has(f)) objects.set(f, f % 5 === 0 ? { path: `_deletions/${f}.arrow`, role: "delete" } : { path: `data/${f}.lance`, role: "data", size: f });
      return objects.get(f)!;
    };
    for (let v = 1; v <= 40; v++) {
      // 60 new files a version, the oldest dropped every tenth version: past 1,024 ids by the end.
      const list = Array.from({ length: 60 * v }, (_, f) => file(f)).filter((_, f) => v % 10 !== 0 || f >= 30);
      plain.addAll(v, list);
      columns.addAll(v, table.encode(list));
      if (v % 7 === 0) expect(columns.lookup("data/1.lance")).toEqual(plain.lookup("data/1.lance"));
    }
    expect(table.size).toBeGreaterThan(2048);
    const keys = [...objects.values()].map((reference) => reference.path);
    expect(everything(columns, keys)).toEqual(everything(plain, keys));
  });

  it("keeps roles no format declares beside the known ones, each path with the role it was first added with", () => {
    const table = new ReferenceTable();
    const plain = new ReferenceSet();
    const columns = new ReferenceSet();
    const list: FileReference[] = [
      { path: "data/a.lance", role: "data", size: 1 },
      { path: "cache/b.bin", role: "vector-cache" },
      { path: "_deletions/c.arrow", role: "delete" },
      { path: "cache/d.bin", role: "another-role", size: 4 },
    ];
    for (let v = 1; v <= 3; v++) {
      plain.addAll(v, list);
      columns.addAll(v, table.encode(list));
    }
    const keys = list.map((reference) => reference.path);
    expect(everything(columns, keys)).toEqual(everything(plain, keys));
    expect(columns.lookup("cache/b.bin")).toEqual({ path: "cache/b.bin", kind: "vector-cache", versions: [1, 2, 3], count: 3 });
    expect(columns.lookup("cache/d.bin")?.kind).toBe("another-role");
  });
});
