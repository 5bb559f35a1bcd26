/**
 * Lance's proof of an `.arrow` deletion file (prove-file.ts, with lib/arrow/ipc-file-check.ts)
 * against apache-arrow's reader as the oracle (arrow-oracle.ts): on deletion files LanceDB writes
 * at test time and on damaged copies (truncated, footer length wrong, magic missing, a block past
 * the end, no blocks, every byte of the footer and of the batch's message flipped in turn), the
 * proof calls a file whole only when apache-arrow reads it. It is stricter only where apache-arrow
 * reads past damage (offsets it follows out of its buffer read as zeros; the trailing magic and a
 * block's lengths, which it does not read; the buffers of a batch it cannot decompress): there
 * pyarrow, whose reader verifies every FlatBuffer and decompresses the body, refuses the file, or,
 * for a buffer outside its batch's body (pyarrow skips a validity buffer no null needs), LanceDB
 * itself cannot read the table.
 */
import { execFileSync } from "node:child_process";
import { cp, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { RecordBatchFileReader } from "apache-arrow";
import { checkIpcFile } from "../../../lib/arrow/ipc-file-check.ts";
import { proveLanceFile } from "../../../lib/formats/lance/prove-file.ts";
import { LocalStore } from "../../../lib/store/local-store.ts";
import { buildLanceDataset, makeTempDir, removeDir } from "../../support/lance-datasets.ts";
import { toolPython } from "../../tools/python-env.ts";
import { arrowReads } from "./arrow-oracle.ts";

const TAIL_BYTES = 10;

let dir = "";
let tableDir = "";
/** The `.arrow` deletion files LanceDB wrote, relative to the table root. */
let deletionFiles: string[] = [];

beforeAll(async () => {
  dir = await makeTempDir("lw-prove-deletions-");
  const ds = await buildLanceDataset({
    dbUri: dir,
    steps: [
      { op: "create", rows: 40 },
      { op: "delete", where: "id % 4 = 1" },
      { op: "append", rows: 30 },
      { op: "delete", where: "id % 5 = 2" },
    ],
  });
  ds.close();
  tableDir = ds.tableUri;
  deletionFiles = (await readdir(join(tableDir, "_deletions"))).filter((name) => name.endsWith(".arrow")).map((name) => `_deletions/${name}`);
});
afterAll(() => removeDir(dir));

/** pyarrow's verdict on each file: it opens it and reads every batch (decompressing it), validated in full. */
function pyarrowReads(paths: readonly string[]): boolean[] {
  const script = [
    "import json, sys, pyarrow.ipc as ipc",
    "def reads(path):",
    "    try:",
    "        table = ipc.open_file(path).read_all()",
    "        table.validate(full=True)",
    "        return True",
    "    except Exception:",
    "        return False",
    "print(json.dumps([reads(p) for p in sys.argv[1:]]))",
  ].join("\n");
  return JSON.parse(execFileSync(toolPython(), ["-c", script, ...paths], { encoding: "utf8" }));
}

/** Where the footer starts, by the length the file states (as written). */
function footerStart(bytes: Uint8Array): number {
  return bytes.length - TAIL_BYTES - new DataView(bytes.buffer, bytes.byteOffset).getInt32(bytes.length - TAIL_BYTES, true);
}

/** Where the footer's first record batch Block lies: found by its bytes, as apache-arrow decodes them. */
function firstBlockAt(bytes: Uint8Array): number {
  const reader = RecordBatchFileReader.from(bytes);
  reader.open();
  const block = reader.footer!.getRecordBatch(0)!;
  const pattern = new DataView(new ArrayBuffer(24));
  pattern.setBigInt64(0, BigInt(block.offset), true);
  pattern.setInt32(8, block.metaDataLength, true);
  pattern.setBigInt64(16, BigInt(block.bodyLength), true);
  const wanted = Buffer.from(pattern.buffer);
  const at = Buffer.from(bytes).indexOf(wanted, footerStart(bytes));
  if (at < 0) throw new Error("the footer's block not found");
  return at;
}

function edited(bytes: Uint8Array, edit: (copy: Uint8Array, view: DataView) => void): Uint8Array {
  const copy = bytes.slice();
  edit(copy, new DataView(copy.buffer));
  return copy;
}

interface NamedDamage {
  name: string;
  bytes: Uint8Array;
  /** What the proof says of it. */
  says: RegExp;
  /** apache-arrow reads past it (it reads neither the trailing magic nor a block's body length): pyarrow refuses it. */
  arrowBlind?: true;
}

/** The named damages, each with what the proof must say. */
function namedDamages(bytes: Uint8Array): NamedDamage[] {
  const size = bytes.length;
  const block = firstBlockAt(bytes);
  return [
    { name: "truncated to half", bytes: bytes.slice(0, size >> 1), says: /no ARROW1 magic at both ends/ },
    { name: "last byte cut", bytes: bytes.slice(0, size - 1), says: /no ARROW1 magic/ },
    { name: "footer length past the start", bytes: edited(bytes, (_, v) => v.setInt32(size - TAIL_BYTES, size, true)), says: /footer length \d+ does not fit/ },
    { name: "footer length zero", bytes: edited(bytes, (_, v) => v.setInt32(size - TAIL_BYTES, 0, true)), says: /footer length 0 does not fit/ },
    { name: "footer length 8 short", bytes: edited(bytes, (_, v) => v.setInt32(size - TAIL_BYTES, v.getInt32(size - TAIL_BYTES, true) - 8, true)), says: /damaged Arrow file/ },
    { name: "leading magic missing", bytes: edited(bytes, (b) => b.set([0, 0, 0, 0, 0, 0], 0)), says: /no ARROW1 magic/ },
    { name: "trailing magic missing", bytes: edited(bytes, (b) => b.set([0, 0, 0, 0, 0, 0], size - 6)), says: /no ARROW1 magic/, arrowBlind: true },
    { name: "block offset past the end", bytes: edited(bytes, (_, v) => v.setBigInt64(block, BigInt(size), true)), says: /record batch 0's block .* lies outside/ },
    {
      name: "block body past the end",
      bytes: edited(bytes, (_, v) => v.setBigInt64(block + 16, BigInt(size), true)),
      says: /record batch 0's block .* lies outside/,
      arrowBlind: true,
    },
    { name: "zero blocks", bytes: edited(bytes, (_, v) => v.setUint32(block - 4, 0, true)), says: /names no record batch/ },
  ];
}

const BUFFER_OUTSIDE_BODY = /record batch \d+'s buffer \d+ .* lies outside its \d+-byte body/;

interface FlippedFile {
  path: string;
  name: string;
  bytes: Uint8Array;
  proof: string | null;
}

let flippedMemo: Promise<FlippedFile[]> | undefined;

/** Every deletion file with each byte of its footer, and of its batch's message, flipped in turn, and the proof's verdict. */
function flippedVariants(): Promise<FlippedFile[]> {
  flippedMemo ??= (async () => {
    const flipped: { path: string; name: string; bytes: Uint8Array }[] = [];
    for (const path of deletionFiles) {
      const bytes = new Uint8Array(await readFile(join(tableDir, path)));
      const reader = RecordBatchFileReader.from(bytes);
      reader.open();
      const block = reader.footer!.getRecordBatch(0)!;
      const regions = [...flips(bytes, footerStart(bytes), bytes.length - TAIL_BYTES), ...flips(bytes, block.offset, block.offset + block.metaDataLength)];
      for (const flip of regions) flipped.push({ path, name: `${path} byte ${flip.at}`, bytes: flip.bytes });
    }
    return flipped.map((v) => ({ ...v, proof: checkIpcFile(v.bytes) }));
  })();
  return flippedMemo;
}

/** Whether LanceDB reads every row of the table `t` in `dbUri` (it reads each deletion file to). */
async function lanceReads(dbUri: string): Promise<boolean> {
  const db = await lancedb.connect(dbUri);
  try {
    const table = await db.openTable("t");
    try {
      await table.query().toArray();
      return true;
    } catch {
      return false;
    } finally {
      table.close();
    }
  } finally {
    db.close();
  }
}

/** Every byte from `from` to `to`, flipped (all bits) one at a time. */
function flips(bytes: Uint8Array, from: number, to: number): { at: number; bytes: Uint8Array }[] {
  return Array.from({ length: to - from }, (_, i) => ({ at: from + i, bytes: edited(bytes, (b) => void (b[from + i]! ^= 0xff)) }));
}

describe("Lance deletion files (.arrow): the proof against apache-arrow's reader", () => {
  it("LanceDB wrote .arrow deletion files; each is whole to the proof, to apache-arrow and to pyarrow", async () => {
    expect(deletionFiles.length).toBeGreaterThanOrEqual(2);
    const store = new LocalStore(tableDir);
    for (const path of deletionFiles) {
      const bytes = new Uint8Array(await readFile(join(tableDir, path)));
      expect(arrowReads(bytes), path).toBe(true);
      expect(await proveLanceFile(store, { path, role: "delete" }, { key: path, size: bytes.length, etag: '"x"', lastModified: new Date() }), path).toBeNull();
    }
    expect(pyarrowReads(deletionFiles.map((path) => join(tableDir, path)))).toEqual(deletionFiles.map(() => true));
  });

  it("each named damage: the proof says what is wrong in one line, and apache-arrow cannot read the file either (or pyarrow, where apache-arrow reads past it)", async () => {
    const blind: string[] = [];
    for (const path of deletionFiles) {
      const bytes = new Uint8Array(await readFile(join(tableDir, path)));
      for (const damage of namedDamages(bytes)) {
        const verdict = checkIpcFile(damage.bytes);
        expect(verdict, damage.name).toMatch(damage.says);
        expect(verdict, damage.name).not.toContain("\n");
        expect(arrowReads(damage.bytes), damage.name).toBe(damage.arrowBlind === true);
        if (!damage.arrowBlind) continue;
        const file = join(dir, `blind-${blind.length}.arrow`);
        await writeFile(file, damage.bytes);
        blind.push(file);
      }
    }
    expect(pyarrowReads(blind)).toEqual(blind.map(() => false));
  });

  it("through the store: a damaged deletion file is refused, in one line", async () => {
    const path = deletionFiles[0]!;
    const bytes = new Uint8Array(await readFile(join(tableDir, path)));
    const damaged = namedDamages(bytes).find((damage) => damage.name === "block offset past the end")!;
    const copy = `${path}.damaged.arrow`;
    await writeFile(join(tableDir, copy), damaged.bytes);
    const verdict = await proveLanceFile(
      new LocalStore(tableDir),
      { path: copy, role: "delete" },
      { key: copy, size: damaged.bytes.length, etag: '"x"', lastModified: new Date() },
    );
    expect(verdict).toMatch(/^damaged Arrow file: record batch 0's block/);
  });

  it("every byte of the footer and of the batch's message flipped: whole to the proof only when apache-arrow reads it; refused only when apache-arrow or pyarrow cannot read it", async () => {
    const variants = await flippedVariants();
    const whole = variants.filter((v) => v.proof === null);
    expect(whole.filter((v) => !arrowReads(v.bytes)).map((v) => v.name)).toEqual([]);
    const refused = variants.filter((v) => v.proof !== null);
    const paths = await Promise.all(
      refused.map(async (v, i) => {
        const file = join(dir, `refused-${i}.arrow`);
        await writeFile(file, v.bytes);
        return file;
      }),
    );
    const pyarrow = pyarrowReads(paths);
    // pyarrow skips the validity buffer of a column without nulls; Lance's reader does not (the next test).
    const readable = refused.filter((v, i) => pyarrow[i] && arrowReads(v.bytes) && !BUFFER_OUTSIDE_BODY.test(v.proof!));
    expect(readable.map((v) => `${v.name}: ${v.proof}`)).toEqual([]);
    // The flips reach both verdicts: most damage is seen, some bytes (padding, a name) leave the file readable.
    expect(whole.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(whole.length);
  });

  it("a buffer outside its batch's body, which apache-arrow and pyarrow read past: LanceDB cannot read the table with it", async () => {
    const copyDir = await makeTempDir("lw-prove-deletions-copy-");
    try {
      await cp(tableDir, join(copyDir, "t.lance"), { recursive: true });
      expect(await lanceReads(copyDir)).toBe(true);
      const variants = await flippedVariants();
      for (const path of deletionFiles) {
        const damaged = variants.find((v) => v.path === path && BUFFER_OUTSIDE_BODY.test(v.proof ?? ""));
        expect(damaged, path).toBeDefined();
        expect(arrowReads(damaged!.bytes), path).toBe(true);
        await writeFile(join(copyDir, "t.lance", path), damaged!.bytes);
      }
      expect(await lanceReads(copyDir)).toBe(false);
    } finally {
      await removeDir(copyDir);
    }
  });
});
