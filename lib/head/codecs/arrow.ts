/**
 * The `arrow` codec (default): every named table as one Arrow IPC stream, framed
 *
 *   u32 LE section count
 *   per section: u16 LE name length | name (UTF-8) | u32 LE stream length | Arrow IPC stream
 *
 * with the properties first, as a key/value section named "@properties". Explicit framing,
 * rather than back-to-back streams, lets a reader skip a section (the manifest bytes) unread.
 *
 * apache-arrow 18.1.0 cannot write IPC body compression (no writer option) nor read it
 * (ipc/metadata/message throws "Record batch compression not implemented"), so the streams
 * are uncompressed here and the whole body is compressed outside the codec (see body.ts).
 */
import { DataType, Precision, Table, makeVector, tableFromIPC, tableToIPC } from "apache-arrow";
import type { Vector } from "apache-arrow";
import type { HeadCodec } from "../codec.ts";
import { ArrowColumnError, columnData, columnValues } from "../../arrow/column-buffers.ts";
import { HeadCodecError } from "../errors.ts";
import { modelProblem } from "../model.ts";
import type { ColumnType, HeadColumn, HeadModel, HeadTable } from "../model.ts";

const PROPERTIES_SECTION = "@properties";

export const arrowCodec: HeadCodec = {
  name: "arrow",

  encode(model: HeadModel): Uint8Array {
    const problem = modelProblem(model);
    if (problem) throw new HeadCodecError(`cannot encode head: ${problem}`);
    const properties = Object.entries(model.properties);
    const sections: [string, Uint8Array][] = [
      [
        PROPERTIES_SECTION,
        encodeTable([
          { name: "key", type: "utf8", values: properties.map(([key]) => key) },
          { name: "value", type: "utf8", values: properties.map(([, value]) => value) },
        ]),
      ],
      ...model.tables.map((table): [string, Uint8Array] => [table.name, encodeTable(table.columns)]),
    ];
    return frame(sections);
  },

  decode(body: Uint8Array): HeadModel {
    const sections = unframe(body);
    const [first, ...rest] = sections;
    if (!first || first[0] !== PROPERTIES_SECTION) throw new HeadCodecError("arrow body does not start with the properties section");
    const propertyColumns = decodeTable(first[0], first[1]);
    const keys = propertyColumns.find((column) => column.name === "key");
    const values = propertyColumns.find((column) => column.name === "value");
    if (keys?.type !== "utf8" || values?.type !== "utf8") throw new HeadCodecError("arrow properties section lacks key/value columns");
    const properties: Record<string, string> = {};
    keys.values.forEach((key, row) => {
      const value = values.values[row];
      if (key === null || value === null || value === undefined) throw new HeadCodecError("arrow properties section holds a null");
      properties[key] = value;
    });
    const model: HeadModel = {
      properties,
      tables: rest.map(([name, bytes]): HeadTable => ({ name, columns: decodeTable(name, bytes) })),
    };
    // Values come typed from their buffers (lib/arrow/column-buffers.ts checks ranges and nulls in lists):
    // the structure is checked, not every value again.
    const problem = modelProblem(model, { values: false });
    if (problem) throw new HeadCodecError(`arrow body is not a valid head: ${problem}`);
    return model;
  },
};

function encodeTable(columns: HeadColumn[]): Uint8Array {
  const vectors: Record<string, Vector> = {};
  for (const column of columns) vectors[column.name] = toVector(column);
  return tableToIPC(new Table(vectors), "stream");
}

function toVector(column: HeadColumn): Vector {
  return makeVector(asCodecError(() => columnData(column.type, column.values)));
}

/** A column the buffers refuse is the codec's failure: HeadCodecError, as every codec throws. */
function asCodecError<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ArrowColumnError) throw new HeadCodecError(error.message, { cause: error });
    throw error;
  }
}

function decodeTable(name: string, bytes: Uint8Array): HeadColumn[] {
  let table: Table;
  try {
    table = tableFromIPC(bytes);
  } catch (error) {
    throw new HeadCodecError(`arrow section ${name} is not an Arrow IPC stream: ${(error as Error).message}`, { cause: error });
  }
  return table.schema.fields.map((field, index) => {
    const type = columnTypeOf(field.type);
    if (!type) throw new HeadCodecError(`arrow section ${name}: column ${field.name} has unsupported type ${String(field.type)}`);
    const vector = table.getChildAt(index);
    const values = vector ? asCodecError(() => columnValues(vector.data, type, name, field.name)) : [];
    if (values.length !== table.numRows) throw new HeadCodecError(`arrow section ${name}: column ${field.name} is short`);
    return { name: field.name, type, values } as HeadColumn;
  });
}

function columnTypeOf(type: DataType): ColumnType | null {
  if (DataType.isUtf8(type)) return "utf8";
  if (DataType.isInt(type) && type.bitWidth === 64 && type.isSigned) return "int64";
  if (DataType.isFloat(type) && type.precision === Precision.DOUBLE) return "float64";
  if (DataType.isBool(type)) return "bool";
  if (DataType.isBinary(type)) return "binary";
  if (DataType.isList(type) && type.children[0] && DataType.isUtf8(type.children[0].type)) return "utf8_list";
  return null;
}

function frame(sections: [string, Uint8Array][]): Uint8Array {
  const names = sections.map(([name]) => new TextEncoder().encode(name));
  const total = 4 + sections.reduce((sum, [, bytes], i) => sum + 2 + names[i]!.length + 4 + bytes.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, sections.length, true);
  let at = 4;
  sections.forEach(([, bytes], i) => {
    const name = names[i]!;
    view.setUint16(at, name.length, true);
    out.set(name, at + 2);
    at += 2 + name.length;
    view.setUint32(at, bytes.length, true);
    out.set(bytes, at + 4);
    at += 4 + bytes.length;
  });
  return out;
}

function unframe(body: Uint8Array): [string, Uint8Array][] {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const need = (at: number, bytes: number, what: string): void => {
    if (at + bytes > body.length) throw new HeadCodecError(`arrow body truncated in ${what} at byte ${at} of ${body.length}`);
  };
  need(0, 4, "section count");
  const count = view.getUint32(0, true);
  const sections: [string, Uint8Array][] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    need(at, 2, `section ${i} name length`);
    const nameLength = view.getUint16(at, true);
    need(at + 2, nameLength, `section ${i} name`);
    const name = new TextDecoder("utf-8", { fatal: true }).decode(body.subarray(at + 2, at + 2 + nameLength));
    at += 2 + nameLength;
    need(at, 4, `section ${name} length`);
    const length = view.getUint32(at, true);
    need(at + 4, length, `section ${name}`);
    sections.push([name, body.subarray(at + 4, at + 4 + length)]);
    at += 4 + length;
  }
  if (at !== body.length) throw new HeadCodecError(`arrow body has ${body.length - at} bytes after its last section`);
  return sections;
}
