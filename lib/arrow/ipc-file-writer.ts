/**
 * An Arrow IPC file (format version V5, little-endian) of one record batch of flat int64, bool
 * and utf8 columns, written from the columns' buffers: what a checkpoint is. Any Arrow reader
 * opens it (the tests read it back with apache-arrow and pyarrow). The layout is the
 * specification's: magic, the schema message, the record batch message, end of stream, the
 * footer, its length, magic; every message's metadata and every body buffer padded to 8 bytes.
 */
import { writeFlatBuffer, type FlatStructs, type FlatTable } from "./flat-writer.ts";

export type IpcColumnType = "int64" | "bool" | "utf8";

/** A column as its Arrow buffers: validity (absent when no nulls), offsets (utf8 only), values. */
export interface IpcColumn {
  name: string;
  type: IpcColumnType;
  nullable: boolean;
  nullCount: number;
  validity?: Uint8Array;
  offsets?: Int32Array;
  values: Uint8Array | BigInt64Array;
}

const MAGIC = Buffer.from("ARROW1", "latin1");
const METADATA_V5 = 4;
const HEADER_SCHEMA = 1;
const HEADER_RECORD_BATCH = 3;
const TYPE_INT = 2;
const TYPE_UTF8 = 5;
const TYPE_BOOL = 6;

function typeOf(type: IpcColumnType): { id: number; table: FlatTable } {
  switch (type) {
    case "int64":
      return {
        id: TYPE_INT,
        table: {
          kind: "table",
          fields: [
            { kind: "i32", value: 64 },
            { kind: "u8", value: 1 },
          ],
        },
      };
    case "bool":
      return { id: TYPE_BOOL, table: { kind: "table", fields: [] } };
    case "utf8":
      return { id: TYPE_UTF8, table: { kind: "table", fields: [] } };
  }
}

/** Schema { endianness, fields, custom_metadata }. */
function schemaTable(columns: readonly IpcColumn[], metadata: ReadonlyMap<string, string>): FlatTable {
  const fields = columns.map((column): FlatTable => {
    const type = typeOf(column.type);
    return {
      kind: "table",
      // Field { name, nullable, type_type, type, dictionary, children }: C++ readers want children present, even empty.
      fields: [
        { kind: "ref", value: { kind: "string", value: column.name } },
        { kind: "u8", value: column.nullable ? 1 : 0 },
        { kind: "u8", value: type.id },
        { kind: "ref", value: type.table },
        undefined,
        { kind: "ref", value: { kind: "tables", items: [] } },
      ],
    };
  });
  const keyValues = [...metadata].map(
    ([key, value]): FlatTable => ({
      kind: "table",
      fields: [
        { kind: "ref", value: { kind: "string", value: key } },
        { kind: "ref", value: { kind: "string", value: value } },
      ],
    }),
  );
  return {
    kind: "table",
    fields: [undefined, { kind: "ref", value: { kind: "tables", items: fields } }, { kind: "ref", value: { kind: "tables", items: keyValues } }],
  };
}

/** Pairs of int64 (FieldNode, Buffer) as struct bytes. */
function int64Pairs(pairs: readonly (readonly [number, number])[]): FlatStructs {
  const values = new BigInt64Array(pairs.length * 2);
  pairs.forEach(([a, b], i) => {
    values[i * 2] = BigInt(a);
    values[i * 2 + 1] = BigInt(b);
  });
  return { kind: "structs", count: pairs.length, bytes: new Uint8Array(values.buffer) };
}

function padded8(length: number): number {
  return Math.ceil(length / 8) * 8;
}

/** The record batch's body (every buffer 8-aligned) and its RecordBatch table. */
function recordBatch(columns: readonly IpcColumn[], length: number): { body: Uint8Array; table: FlatTable } {
  const buffers: Uint8Array[] = [];
  for (const column of columns) {
    buffers.push(column.nullCount > 0 && column.validity ? column.validity : new Uint8Array(0));
    if (column.offsets) buffers.push(new Uint8Array(column.offsets.buffer, column.offsets.byteOffset, column.offsets.byteLength));
    buffers.push(new Uint8Array(column.values.buffer, column.values.byteOffset, column.values.byteLength));
  }
  const body = new Uint8Array(buffers.reduce((sum, buffer) => sum + padded8(buffer.length), 0));
  const spans: [number, number][] = [];
  let at = 0;
  for (const buffer of buffers) {
    body.set(buffer, at);
    spans.push([at, buffer.length]);
    at += padded8(buffer.length);
  }
  const nodes = columns.map((column) => [length, column.nullCount] as const);
  return {
    body,
    table: {
      kind: "table",
      fields: [
        { kind: "i64", value: length },
        { kind: "ref", value: int64Pairs(nodes) },
        { kind: "ref", value: int64Pairs(spans) },
      ],
    },
  };
}

/** An encapsulated message: continuation marker, metadata length, the Message FlatBuffer (8-padded), then the body. */
function message(headerType: number, header: FlatTable, body: Uint8Array): { bytes: Uint8Array; metadataLength: number } {
  const flat = writeFlatBuffer({
    kind: "table",
    fields: [
      { kind: "i16", value: METADATA_V5 },
      { kind: "u8", value: headerType },
      { kind: "ref", value: header },
      { kind: "i64", value: body.length },
    ],
  });
  const bytes = new Uint8Array(8 + flat.length + body.length);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 0xffffffff, true);
  view.setInt32(4, flat.length, true);
  bytes.set(flat, 8);
  bytes.set(body, 8 + flat.length);
  return { bytes, metadataLength: 8 + flat.length };
}

/** The Arrow IPC file of one record batch of `length` rows. */
export function writeIpcFile(columns: readonly IpcColumn[], length: number, metadata: ReadonlyMap<string, string>): Uint8Array {
  const schema = schemaTable(columns, metadata);
  const schemaMessage = message(HEADER_SCHEMA, schema, new Uint8Array(0));
  const batch = recordBatch(columns, length);
  const batchMessage = message(HEADER_RECORD_BATCH, batch.table, batch.body);
  const batchOffset = 8 + schemaMessage.bytes.length;
  // Block { offset, metaDataLength, (padding), bodyLength }.
  const block = new DataView(new ArrayBuffer(24));
  block.setBigInt64(0, BigInt(batchOffset), true);
  block.setInt32(8, batchMessage.metadataLength, true);
  block.setBigInt64(16, BigInt(batch.body.length), true);
  const footer = writeFlatBuffer({
    kind: "table",
    fields: [
      { kind: "i16", value: METADATA_V5 },
      { kind: "ref", value: schema },
      { kind: "ref", value: { kind: "structs", count: 0, bytes: new Uint8Array(0) } },
      { kind: "ref", value: { kind: "structs", count: 1, bytes: new Uint8Array(block.buffer) } },
    ],
  });
  const endOfStream = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
  const parts = [MAGIC, new Uint8Array(2), schemaMessage.bytes, batchMessage.bytes, endOfStream, footer];
  const total = parts.reduce((sum, part) => sum + part.length, 0) + 4 + MAGIC.length;
  const file = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    file.set(part, at);
    at += part.length;
  }
  new DataView(file.buffer).setInt32(at, footer.length, true);
  file.set(MAGIC, at + 4);
  return file;
}
