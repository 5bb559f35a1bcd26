import { describe, expect, it } from "vitest";
import type { FileReference } from "../../lib/model/file-reference.ts";
import { ReferenceSet } from "../../lib/maintenance/references.ts";
import { ReferenceTable } from "../../lib/maintenance/version-references.ts";

/** Versions naming data files, a folder, a path re-described (another size, then another role), a bad path, and a commit key added apart. */
function versions(): FileReference[][] {
  const out: FileReference[][] = [];
  for (let v = 1; v <= 12; v++) {
    const list: FileReference[] = [];
    for (let f = Math.max(0, v - 6); f < v + 20; f++)
      list.push(f % 4 === 0 ? { path: `data/${f}.lance`, role: "data" } : { path: `data/${f}.lance`, role: "data", size: 1000 + f });
    list.push({ path: "_indices/idx/", role: "index" });
    list.push(
      v < 6
        ? { path: "data/shared.lance", role: "data" }
        : v < 9
          ? { path: "data/shared.lance", role: "data", size: v < 8 ? 7 : 9 }
          : { path: "data/shared.lance", role: "delete" },
    );
    if (v === 4) list.push({ path: "../outside.lance", role: "data" });
    out.push(list);
  }
  return out;
}

function everything(set: ReferenceSet, keys: readonly string[]) {
  return { all: [...set.all()], size: set.size, outside: set.outside, lookups: keys.map((key) => set.lookup(key) ?? null) };
}

describe("ReferenceSet over a scan's table: the same answers as over plain lists", () => {
  it("gives every path its count, first role, first size, first versions, in the order first added, whichever order versions come in", () => {
    const lists = versions();
    const table = new ReferenceTable();
    // The scan reads versions in any order; sets are built in version order, one of them out of order here.
    const encoded = [...lists.keys()].reverse().map((i) => [i, table.encode(lists[i]!)] as const);
    const byVersion = new Map(encoded);
    const order = [0, 1, 2, 3, 7, 4, 5, 6, 8, 9, 10, 11];
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
    // Size 9: version 8 is added before 6 and 7 (the first size added counts).
    expect(columns.lookup("data/shared.lance")).toEqual({ path: "data/shared.lance", kind: "data", versions: [1, 2, 3], count: 12, size: 9 });
    expect(columns.unresolvable()).toEqual([{ path: "../outside.lance", version: 4, kind: "unresolvable", reason: expect.stringContaining("the format gave a path that") }]);
  });
});
