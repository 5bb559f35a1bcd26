/**
 * A minimal FlatBuffers writer for the few Arrow IPC messages lakewarden writes itself
 * (ipc-file-writer.ts). It lays a buffer out front to back: a table's vtable, then the table,
 * then what its offset fields point to, so every offset points forward as the format requires.
 * A cleanup writes two checkpoints in a cold process, where the general builder and the Arrow
 * library's writer around it ran mostly as code compiled for the first time.
 */

/** A table field by its id in the schema (the index in `FlatTable.fields`); absent ones are omitted. */
export type FlatField =
  | { kind: "u8"; value: number }
  | { kind: "i16"; value: number }
  | { kind: "i32"; value: number }
  | { kind: "i64"; value: number }
  | { kind: "ref"; value: FlatNode };

export interface FlatTable {
  kind: "table";
  fields: readonly (FlatField | undefined)[];
}

/** A vector of structs, given as their bytes (each struct `structBytes` long, 8-byte aligned). */
export interface FlatStructs {
  kind: "structs";
  count: number;
  bytes: Uint8Array;
}

export type FlatNode = FlatTable | { kind: "string"; value: string } | { kind: "tables"; items: readonly FlatTable[] } | FlatStructs;

const SIZES = { u8: 1, i16: 2, i32: 4, i64: 8, ref: 4 } as const;

class Output {
  bytes = new Uint8Array(1024);
  view = new DataView(this.bytes.buffer);
  pos = 0;

  reserve(length: number): number {
    const at = this.pos;
    if (at + length > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, at + length));
      grown.set(this.bytes);
      this.bytes = grown;
      this.view = new DataView(grown.buffer);
    }
    this.pos = at + length;
    return at;
  }

  /** Zeros up to a multiple of `alignment` past `offset` (the buffer's start is 8-aligned in its file). */
  align(alignment: number, offset = 0): void {
    const pad = (alignment - ((this.pos + offset) % alignment)) % alignment;
    this.reserve(pad);
  }
}

/** The bytes of one FlatBuffer whose root is `root`, padded to a multiple of 8. */
export function writeFlatBuffer(root: FlatTable): Uint8Array {
  const out = new Output();
  out.reserve(4);
  const rootAt = writeTable(out, root);
  out.view.setUint32(0, rootAt, true);
  out.align(8);
  return out.bytes.slice(0, out.pos);
}

function writeTable(out: Output, table: FlatTable): number {
  // Inline layout: the soffset to the vtable first, then the fields, widest first, each aligned.
  const order = table.fields
    .map((field, id) => ({ field, id }))
    .filter((entry): entry is { field: FlatField; id: number } => entry.field !== undefined)
    .sort((a, b) => SIZES[b.field.kind] - SIZES[a.field.kind]);
  const offsets = new Array<number>(table.fields.length).fill(0);
  let inline = 4;
  for (const { field, id } of order) {
    const size = SIZES[field.kind];
    inline = Math.ceil(inline / size) * size;
    offsets[id] = inline;
    inline += size;
  }
  out.align(2);
  const vtableAt = out.reserve(4 + 2 * table.fields.length);
  out.view.setUint16(vtableAt, 4 + 2 * table.fields.length, true);
  out.view.setUint16(vtableAt + 2, inline, true);
  for (let id = 0; id < offsets.length; id++) out.view.setUint16(vtableAt + 4 + 2 * id, offsets[id]!, true);
  out.align(8);
  const tableAt = out.reserve(inline);
  out.view.setInt32(tableAt, tableAt - vtableAt, true);
  for (const { field, id } of order) {
    const at = tableAt + offsets[id]!;
    if (field.kind === "u8") out.view.setUint8(at, field.value);
    else if (field.kind === "i16") out.view.setInt16(at, field.value, true);
    else if (field.kind === "i32") out.view.setInt32(at, field.value, true);
    else if (field.kind === "i64") out.view.setBigInt64(at, BigInt(field.value), true);
  }
  for (const { field, id } of order) {
    if (field.kind !== "ref") continue;
    const at = tableAt + offsets[id]!;
    // The child first: writing it may grow the buffer, and with it replace `out.view`.
    const child = writeNode(out, field.value);
    out.view.setUint32(at, child - at, true);
  }
  return tableAt;
}

function writeNode(out: Output, node: FlatNode): number {
  switch (node.kind) {
    case "table":
      return writeTable(out, node);
    case "string": {
      const text = Buffer.from(node.value, "utf8");
      out.align(4);
      const at = out.reserve(4 + text.length + 1);
      out.view.setUint32(at, text.length, true);
      out.bytes.set(text, at + 4);
      return at;
    }
    case "tables": {
      out.align(4);
      const at = out.reserve(4 + 4 * node.items.length);
      out.view.setUint32(at, node.items.length, true);
      node.items.forEach((item, i) => {
        const slot = at + 4 + 4 * i;
        const child = writeTable(out, item);
        out.view.setUint32(slot, child - slot, true);
      });
      return at;
    }
    case "structs": {
      // The structs hold 64-bit values: the first one starts 8-aligned, after the 4-byte count.
      out.align(8, 4);
      const at = out.reserve(4 + node.bytes.length);
      out.view.setUint32(at, node.count, true);
      out.bytes.set(node.bytes, at + 4);
      return at;
    }
  }
}
