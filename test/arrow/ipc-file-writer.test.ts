/**
 * lakewarden's own Arrow IPC file writer (lib/arrow/ipc-file-writer.ts, what checkpoints are
 * written with) against two real readers: apache-arrow reads back what its own writer would
 * have written (schema, nullability, metadata, every value), and pyarrow (Arrow C++, whose
 * reader verifies every FlatBuffer) reads the same values.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bool, Field, Int64, Schema, Table, Utf8, makeData, RecordBatch, Struct, tableFromIPC, tableToIPC } from "apache-arrow";
import { columnBuffers, columnData } from "../../lib/arrow/column-buffers.ts";
import { writeIpcFile, type IpcColumn, type IpcColumnType } from "../../lib/arrow/ipc-file-writer.ts";
import { toolPython } from "../tools/python-env.ts";

interface Case {
  name: string;
  columns: { name: string; type: IpcColumnType; nullable: boolean; values: unknown[] }[];
  metadata: Map<string, string>;
}

const TYPES = { int64: () => new Int64(), bool: () => new Bool(), utf8: () => new Utf8() };

/** What apache-arrow's own writer makes of the same columns. */
function arrowWritten(testCase: Case, length: number): Uint8Array {
  const schema = new Schema(
    testCase.columns.map((column) => new Field(column.name, TYPES[column.type](), column.nullable)),
    testCase.metadata,
  );
  const children = testCase.columns.map((column) => columnData(column.type, column.values));
  const data = makeData({ type: new Struct(schema.fields), length, nullCount: 0, children });
  return tableToIPC(new Table(schema, [new RecordBatch(schema, data)]), "file");
}

function ownWritten(testCase: Case, length: number): Uint8Array {
  const columns = testCase.columns.map((column): IpcColumn => ({ name: column.name, type: column.type, nullable: column.nullable, ...columnBuffers(column.type, column.values) }));
  return writeIpcFile(columns, length, testCase.metadata);
}

function described(bytes: Uint8Array) {
  const table = tableFromIPC(bytes);
  return {
    fields: table.schema.fields.map((field) => ({ name: field.name, type: String(field.type), nullable: field.nullable })),
    metadata: Object.fromEntries(table.schema.metadata),
    rows: table.toArray().map((row) => JSON.parse(JSON.stringify(row.toJSON(), (_, value) => (typeof value === "bigint" ? `${value}n` : value)))),
  };
}

const many = Array.from({ length: 1000 }, (_, i) => i);
const CASES: Case[] = [
  {
    name: "nulls in every type, 64-bit values beyond 32 bits and negative, non-ASCII text",
    columns: [
      { name: "id", type: "int64", nullable: false, values: [0, 1, -1, 2 ** 40 + 7, -(2 ** 50), Number.MAX_SAFE_INTEGER] },
      { name: "maybe", type: "int64", nullable: true, values: [null, 5, null, 6, 7, null] },
      { name: "flag", type: "bool", nullable: false, values: [true, false, true, true, false, false] },
      { name: "tri", type: "bool", nullable: true, values: [null, true, false, null, true, null] },
      { name: "text", type: "utf8", nullable: false, values: ["", "a", "ü€𝄞", '{"k":1}', "x".repeat(300), "tail"] },
      { name: "note", type: "utf8", nullable: true, values: [null, "b", null, "", "c", "ß"] },
    ],
    metadata: new Map([
      ["format", "2"],
      ["ü key", "value €"],
    ]),
  },
  { name: "no rows, no metadata", columns: [{ name: "v", type: "int64", nullable: false, values: [] }], metadata: new Map() },
  {
    name: "a thousand rows, many columns and long metadata (the FlatBuffers grow past their first buffer)",
    columns: Array.from({ length: 40 }, (_, c) => ({
      name: `column_${c}`,
      type: (["int64", "bool", "utf8"] as const)[c % 3]!,
      nullable: c % 2 === 0,
      values: many.map((i) => (c % 2 === 0 && i % 7 === 0 ? null : c % 3 === 0 ? i * c : c % 3 === 1 ? i % 2 === 0 : `value ${i} of ${c}`)),
    })),
    metadata: new Map(Array.from({ length: 30 }, (_, i) => [`key.${i}`, JSON.stringify(many.slice(0, i * 10))])),
  },
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lw-ipc-writer-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the checkpoint's Arrow IPC file writer", () => {
  it.each(CASES)("is read by apache-arrow as its own writer's file ($name)", (testCase) => {
    const length = testCase.columns[0]!.values.length;
    expect(described(ownWritten(testCase, length))).toEqual(described(arrowWritten(testCase, length)));
  });

  it.each(CASES)("is read by pyarrow with the same schema, metadata and values ($name)", async (testCase) => {
    const length = testCase.columns[0]!.values.length;
    const path = join(dir, `${CASES.indexOf(testCase)}.arrow`);
    await writeFile(path, ownWritten(testCase, length));
    const script = [
      "import json, sys, pyarrow as pa",
      "reader = pa.ipc.open_file(sys.argv[1])",
      "table = reader.read_all()",
      "table.validate(full=True)",
      "meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}",
      "fields = [{'name': f.name, 'type': str(f.type), 'nullable': f.nullable} for f in table.schema]",
      "print(json.dumps({'batches': reader.num_record_batches, 'fields': fields, 'metadata': meta, 'columns': table.to_pydict()}))",
    ].join("\n");
    const read = JSON.parse(execFileSync(toolPython(), ["-c", script, path], { encoding: "utf8" }));
    const pyTypes = { int64: "int64", bool: "bool", utf8: "string" };
    expect(read).toEqual({
      batches: 1,
      fields: testCase.columns.map((column) => ({ name: column.name, type: pyTypes[column.type], nullable: column.nullable })),
      metadata: Object.fromEntries(testCase.metadata),
      columns: Object.fromEntries(testCase.columns.map((column) => [column.name, column.values])),
    });
  });
});
