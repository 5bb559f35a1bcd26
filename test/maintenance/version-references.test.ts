import { describe, expect, it } from "vitest";
import type { FileReference, ReferenceSequence } from "../../lib/model/file-reference.ts";
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

describe("ReferenceTable.encodeSequence: versions as runs of shared chunks", () => {
  type Chunk = { references: FileReference[] };
  const chunk = (f: number, withDeletion = false): Chunk => ({
    references: [{ path: `data/${f}.lance`, role: "data", size: 1000 + f }, ...(withDeletion ? [{ path: `_deletions/${f}.arrow`, role: "delete" }] : [])],
  });
  const listOf = (sequence: ReferenceSequence) => [...sequence.chunks.slice(0, sequence.count).flatMap((c) => c.references), ...sequence.extra];

  /** Versions as Lance's reader gives them: one array of chunks grown version by version, a new one after a fragment changes. */
  function growingSequences(): ReferenceSequence[] {
    const sequences: ReferenceSequence[] = [];
    let chunks: Chunk[] = [];
    for (let v = 1; v <= 60; v++) {
      if (v % 10 === 0) {
        // A delete: fragment v / 10 gains a deletion file, so a new array starts from the chunks before it.
        const changed = v / 10;
        chunks = [...chunks.slice(0, changed), chunk(changed, true), ...chunks.slice(changed + 1)];
      } else chunks.push(chunk(100 + v));
      const extra: FileReference[] = [{ path: `_transactions/${v}.txn`, role: "transaction" }];
      sequences.push({ chunks, count: chunks.length, extra });
    }
    return sequences;
  }

  it("reads every version back as its list, whichever order the versions are encoded in, mixed with plain lists", () => {
    const sequences = growingSequences();
    for (const stride of [1, 7, 13]) {
      const table = new ReferenceTable();
      const order = sequences.map((_, i) => i).sort((a, b) => ((a * stride) % 61) - ((b * stride) % 61));
      const held = order.map((i) => {
        const sequence = sequences[i]!;
        return { i, references: i % 5 === 4 ? table.encode(listOf(sequence)) : table.encodeSequence(sequence) };
      });
      for (const { i, references } of held) {
        expect(references.list()).toEqual(listOf(sequences[i]!));
        expect(references.length).toBe(listOf(sequences[i]!).length);
      }
    }
  });

  it("versions in arrays of their own that share chunk objects (read out of order) read back as their lists", () => {
    const base = [chunk(1), chunk(2), chunk(3)];
    const longer = [...base, chunk(4), chunk(5)];
    const other = [...base.slice(0, 2), chunk(3, true), chunk(6)];
    const table = new ReferenceTable();
    const sequences: ReferenceSequence[] = [
      { chunks: longer, count: 5, extra: [] },
      { chunks: base, count: 3, extra: [{ path: "_transactions/3.txn", role: "transaction" }] },
      { chunks: other, count: 4, extra: [] },
      { chunks: longer, count: 4, extra: [{ path: "_transactions/4.txn", role: "transaction" }] },
      { chunks: other, count: 2, extra: [] },
    ];
    const held = sequences.map((sequence) => table.encodeSequence(sequence));
    for (const [i, references] of held.entries()) expect(references.list()).toEqual(listOf(sequences[i]!));
  });

  it("a version with fewer chunks than the last one of the same array takes only its own prefix", () => {
    const chunks = [chunk(1), chunk(2), chunk(3), chunk(4)];
    const table = new ReferenceTable();
    const four = table.encodeSequence({ chunks, count: 4, extra: [{ path: "_transactions/4.txn", role: "transaction" }] });
    const two = table.encodeSequence({ chunks, count: 2, extra: [{ path: "data/9.lance", role: "data" }] });
    chunks.push(chunk(5));
    const five = table.encodeSequence({ chunks, count: 5, extra: [] });
    expect(four.list().map((r) => r.path)).toEqual(["data/1.lance", "data/2.lance", "data/3.lance", "data/4.lance", "_transactions/4.txn"]);
    expect(two.list().map((r) => r.path)).toEqual(["data/1.lance", "data/2.lance", "data/9.lance"]);
    expect(five.list().map((r) => r.path)).toEqual(["data/1.lance", "data/2.lance", "data/3.lance", "data/4.lance", "data/5.lance"]);
  });
});
