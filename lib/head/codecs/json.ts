/**
 * The `json` codec: the model as one UTF-8 JSON document, binary values as base64. Larger and
 * slower than `arrow`, but readable with any JSON tool, which is why a table may choose it.
 */
import type { HeadCodec } from "../codec.ts";
import { HeadCodecError } from "../errors.ts";
import { COLUMN_TYPES, modelProblem } from "../model.ts";
import type { ColumnType, HeadColumn, HeadModel, HeadTable } from "../model.ts";

interface JsonColumn {
  name: string;
  type: ColumnType;
  values: unknown[];
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const jsonCodec: HeadCodec = {
  name: "json",

  encode(model: HeadModel): Uint8Array {
    const problem = modelProblem(model);
    if (problem) throw new HeadCodecError(`cannot encode head: ${problem}`);
    for (const table of model.tables) {
      for (const column of table.columns) {
        // JSON has no NaN or Infinity (stringify would turn them into null): refuse rather than change them.
        if (column.type === "float64" && column.values.some((v) => v !== null && !Number.isFinite(v))) {
          throw new HeadCodecError(`cannot encode head as json: ${table.name}.${column.name} holds a non-finite number`);
        }
      }
    }
    const document = {
      properties: model.properties,
      tables: model.tables.map((table) => ({
        name: table.name,
        columns: table.columns.map(
          (column): JsonColumn => ({
            name: column.name,
            type: column.type,
            values: column.type === "binary" ? column.values.map((value) => (value === null ? null : Buffer.from(value).toString("base64"))) : column.values,
          }),
        ),
      })),
    };
    return new TextEncoder().encode(JSON.stringify(document));
  },

  decode(body: Uint8Array): HeadModel {
    let document: unknown;
    try {
      document = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch (error) {
      throw new HeadCodecError(`json body does not parse: ${(error as Error).message}`, { cause: error });
    }
    if (!isRecord(document) || !isRecord(document.properties) || !Array.isArray(document.tables)) {
      throw new HeadCodecError("json body lacks properties or tables");
    }
    const model: HeadModel = {
      properties: document.properties as Record<string, string>,
      tables: document.tables.map(decodeTable),
    };
    const problem = modelProblem(model);
    if (problem) throw new HeadCodecError(`json body is not a valid head: ${problem}`);
    return model;
  },
};

function decodeTable(table: unknown): HeadTable {
  if (!isRecord(table) || typeof table.name !== "string" || !Array.isArray(table.columns)) {
    throw new HeadCodecError("json body has a malformed table entry");
  }
  return { name: table.name, columns: table.columns.map((column) => decodeColumn(table.name as string, column)) };
}

function decodeColumn(tableName: string, column: unknown): HeadColumn {
  if (!isRecord(column) || typeof column.name !== "string" || !Array.isArray(column.values)) {
    throw new HeadCodecError(`json body: table ${tableName} has a malformed column entry`);
  }
  const type = column.type as ColumnType;
  if (!COLUMN_TYPES.includes(type)) throw new HeadCodecError(`json body: column ${column.name} has unknown type ${String(type)}`);
  if (type !== "binary") return { name: column.name, type, values: column.values } as HeadColumn;
  const values = column.values.map((value) => {
    if (value === null) return null;
    if (typeof value !== "string" || !BASE64.test(value)) {
      throw new HeadCodecError(`json body: column ${column.name} holds a value that is not base64`);
    }
    return new Uint8Array(Buffer.from(value, "base64"));
  });
  return { name: column.name, type, values };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
