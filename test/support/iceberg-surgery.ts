/**
 * Edits copies of Iceberg fixture tables into the unusual or damaged shapes a test needs: metadata
 * JSON rewritten in place (losslessly: 64-bit ids stay exact), Avro manifests and manifest lists
 * re-encoded with avsc (Iceberg's `field-id` attributes kept in the header schema). Only ever run on
 * a copy in a temporary folder.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import avro from "avsc";
import { bigintLongOptions } from "../../lib/formats/iceberg/avro.ts";
import { parseJsonLossless, stringifyJsonLossless, type JsonValue } from "../../lib/formats/iceberg/lossless-json.ts";
import { decodeAvroFile, encodeAvroFile } from "./iceberg-fixtures.ts";

export type Json = Record<string, JsonValue>;

/** Rewrites one metadata JSON file of the copy (`key` under the table root) with `edit` applied. */
export async function editMetadataJson(dir: string, key: string, edit: (json: Json) => void): Promise<void> {
  const json = parseJsonLossless(await readFile(join(dir, key), "utf8")) as Json;
  edit(json);
  await writeFile(join(dir, key), stringifyJsonLossless(json, 2));
}

/** Every `metadata/*.metadata.json` key of the copy. */
export async function metadataJsonKeys(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "metadata")))
    .filter((n) => n.endsWith(".metadata.json"))
    .map((n) => `metadata/${n}`)
    .sort();
}

export interface AvroSchemaJson {
  type: "record";
  name: string;
  fields: { name: string; type: unknown; default?: unknown; "field-id"?: number }[];
}

/**
 * Re-encodes the Avro file at `key`: `editSchema` may change the writer schema (as JSON, field ids
 * and all), `editRecord` each record (decoded with the old schema, written with the new one).
 */
export async function rewriteAvro(
  dir: string,
  key: string,
  edit: { editSchema?: (schema: AvroSchemaJson) => void; editRecord?: (record: Record<string, unknown>, index: number) => void; meta?: Record<string, string> },
): Promise<void> {
  const { meta, records } = await decodeAvroFile(join(dir, key));
  const schema = JSON.parse(meta["avro.schema"]!.toString("utf8")) as AvroSchemaJson;
  edit.editSchema?.(schema);
  for (const [i, r] of records.entries()) edit.editRecord?.(r, i);
  const header: Record<string, Buffer> = { ...meta, "avro.schema": Buffer.from(JSON.stringify(schema)) };
  for (const [k, v] of Object.entries(edit.meta ?? {})) header[k] = Buffer.from(v);
  await encodeAvroFile(join(dir, key), avro.Type.forSchema(schema as avro.Schema, bigintLongOptions()), header, records);
}
