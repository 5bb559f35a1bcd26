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

/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("ReferenceSet over random tables: the answers of one add per file", () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    "random tables as a scan meets them: appends, rewrites, files re-described, sizes missing, versions out of order, look-ups between adds (seed %i)",
    (seed) => {
      const next = random(seed);
      const pick = (n: number) => Math.floor(next() * n);
      const objects = new Map<string, FileReference>();
      // Shared objects (as Lance's reader shares a fragment's references between versions), re-described now and then.
      const file = (f: number, description: number): FileReference => {
        const key = `${f}:${description}`;
        if (!objects.has(key)) {
          const path = f % 11 === 10 ? `_indices/i${f}/` : f % 7 === 0 ? `_deletions/${f}.arrow` : `data/${f}.lance`;
          const role = description === 2 ? "delete" : f % 11 === 10 ? "index" : f % 7 === 0 ? "delete" : "data";
          const size = f % 7 === 0 || description === 1 ? undefined : 100 + f + description;
          objects.set(key, size === undefined ? { path, role } : { path, role, size });
        }
        return objects.get(key)!;
      };
      const table = new ReferenceTable();
      const plain = new ReferenceSet();
      const columns = new ReferenceSet();
      let live: number[] = [];
      let nextFile = 0;
      const described = new Map<number, number>();
      const versionCount = 30 + pick(40);
      const order = Array.from({ length: versionCount }, (_, i) => i + 1);
      // A few versions swapped: a set built out of version order must still answer the same.
      for (let swaps = pick(4); swaps > 0; swaps--) {
        const at = pick(versionCount - 1);
        [order[at], order[at + 1]] = [order[at + 1]!, order[at]!];
      }
      const lists = new Map<number, FileReference[]>();
      for (let v = 1; v <= versionCount; v++) {
        const step = pick(10);
        if (step < 6) live.push(...Array.from({ length: 1 + pick(8) }, () => nextFile++));
        else if (step < 8 && live.length > 0) described.set(live[pick(live.length)]!, pick(3));
        else if (step === 8) live = live.filter(() => next() < 0.7);
        else live = [...live.slice(0, pick(live.length + 1)), nextFile++];
        lists.set(
          v,
          live.map((f) => file(f, described.get(f) ?? 0)),
        );
        if (v === 5) lists.get(v)!.push({ path: "../outside.lance", role: "data" });
      }
      const encoded = new Map([...lists].map(([v, list]) => [v, table.encode(list)] as const));
      const keys = [...new Set([...objects.values()].map((reference) => reference.path)), "_indices/i10/part", "data/none.lance"];
      for (const v of order) {
        plain.addAll(v, lists.get(v)!);
        columns.addAll(v, encoded.get(v)!);
        if (next() < 0.1) {
          const key = keys[pick(keys.length)]!;
          expect(columns.lookup(key)).toEqual(plain.lookup(key));
        }
      }
      expect(everything(columns, keys)).toEqual(everything(plain, keys));
    },
  );
});

describe("ReferenceSet: versions read as shared chunks (Lance), their common runs counted as blocks", () => {
  it("counts the first run of versions whose chain a rewrite cuts after that run (the blocks past the cut still count it)", () => {
    const table = new ReferenceTable();
    const plain = new ReferenceSet();
    const columns = new ReferenceSet();
    const data = (f: number): { references: FileReference[] } => ({ references: [{ path: `data/${f}.lance`, role: "data", size: f + 1 }] });
    // A fragment a version, and a commit file each: every fragment's id is a run of its own.
    const chunks = [0, 1, 2, 3, 4, 5].map(data);
    const sequences = [1, 2, 3, 4, 5, 6].map((v) => ({ chunks, count: v, extra: [{ path: `_transactions/${v}.txn`, role: "transaction" } as FileReference] }));
    // Version 7 rewrites fragment 2 (a deletion file added): of version 6's runs it takes fragment 0's whole (fragment 1's is left open).
    const rewritten = [...chunks.slice(0, 2), { references: [...chunks[2]!.references, { path: "_deletions/2-7.arrow", role: "delete" } as FileReference] }, ...chunks.slice(3)];
    sequences.push({ chunks: rewritten, count: 6, extra: [{ path: "_transactions/7.txn", role: "transaction" }] });
    sequences.push({ chunks: rewritten, count: 6, extra: [{ path: "_transactions/8.txn", role: "transaction" }] });
    const encoded = sequences.map((sequence) => table.encodeSequence(sequence));
    expect(encoded[6]!.baseRuns).toBe(1);
    sequences.forEach((sequence, i) => {
      plain.addAll(i + 1, [...sequence.chunks.slice(0, sequence.count).flatMap((chunk) => chunk.references), ...sequence.extra]);
      columns.addAll(i + 1, encoded[i]!);
    });
    const keys = ["data/0.lance", "data/1.lance", "data/2.lance", "data/5.lance", "_deletions/2-7.arrow", "_transactions/3.txn"];
    expect(everything(columns, keys)).toEqual(everything(plain, keys));
    expect(columns.lookup("data/0.lance")).toEqual({ path: "data/0.lance", kind: "data", versions: [1, 2, 3], count: 8, size: 1 });
  });

  it.each(Array.from({ length: 40 }, (_, i) => 11 + i))(
    "appends, fragments rewritten in the middle, drops, a commit file each, versions out of order, look-ups between adds: the answers of plain lists (seed %i)",
    (seed) => {
      const next = random(seed);
      const pick = (n: number) => Math.floor(next() * n);
      type Chunk = { references: FileReference[] };
      const fragment = (f: number, deletion: number): Chunk => ({
        references: [
          { path: `data/${f}.lance`, role: "data", ...(f % 9 === 8 ? {} : { size: 100 + f }) },
          ...(deletion > 0 ? [{ path: `_deletions/${f}-${deletion}.arrow`, role: "delete" } as FileReference] : []),
        ],
      });
      const table = new ReferenceTable();
      const plain = new ReferenceSet();
      const columns = new ReferenceSet();
      // One array grown in place while versions append (each version a longer prefix of it); a new array when one is rewritten or dropped.
      let chunks: Chunk[] = [];
      let nextFile = 0;
      let deletions = 0;
      const versionCount = 40 + pick(60);
      const sequences = new Map<number, { chunks: Chunk[]; count: number; extra: FileReference[] }>();
      for (let v = 1; v <= versionCount; v++) {
        const step = pick(12);
        if (step < 8 || chunks.length === 0) for (let n = 1 + pick(3); n > 0; n--) chunks.push(fragment(nextFile++, 0));
        else if (step < 10) {
          const at = pick(chunks.length);
          chunks = [...chunks.slice(0, at), fragment(Number(chunks[at]!.references[0]!.path.slice(5, -6)), ++deletions), ...chunks.slice(at + 1)];
        } else if (step === 10) chunks = chunks.filter(() => next() < 0.8);
        else chunks = [fragment(nextFile++, 0)];
        const extra: FileReference[] = [{ path: `_transactions/${v}.txn`, role: "transaction" }];
        if (v === 7) extra.push({ path: "../outside.lance", role: "data" });
        sequences.set(v, { chunks, count: chunks.length, extra });
      }
      const listOf = (sequence: { chunks: Chunk[]; count: number; extra: FileReference[] }) => [
        ...sequence.chunks.slice(0, sequence.count).flatMap((chunk) => chunk.references),
        ...sequence.extra,
      ];
      // The scan encodes versions in version order; the sets are built in version order but for a few swapped.
      const encoded = new Map([...sequences].map(([v, sequence]) => [v, table.encodeSequence(sequence)] as const));
      const order = [...sequences.keys()];
      for (let swaps = pick(3); swaps > 0; swaps--) {
        const at = pick(order.length - 1);
        [order[at], order[at + 1]] = [order[at + 1]!, order[at]!];
      }
      const keys = [...new Set([...sequences.values()].flatMap(listOf).map((reference) => reference.path)), "data/none.lance"];
      for (const v of order) {
        // Every third version in a set of its own (kept and removed versions interleave): the chains break and start again.
        if (v % 3 === 0) continue;
        plain.addAll(v, listOf(sequences.get(v)!));
        columns.addAll(v, encoded.get(v)!);
        if (next() < 0.08) {
          const key = keys[pick(keys.length)]!;
          expect(columns.lookup(key)).toEqual(plain.lookup(key));
        }
      }
      expect(everything(columns, keys)).toEqual(everything(plain, keys));
    },
  );
});
