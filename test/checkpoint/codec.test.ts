import { describe, expect, it } from "vitest";
import { tableFromIPC } from "apache-arrow";
import { decodeCheckpoint, encodeCheckpoint } from "../../lib/checkpoint/codec.ts";
import type { CheckpointContent } from "../../lib/checkpoint/codec.ts";
import { CorruptCheckpointError } from "../../lib/checkpoint/errors.ts";
import { checkpointKey, parseCheckpointKey } from "../../lib/model/layout.ts";
import { MAX_TRANSACTION_PROPERTIES_BYTES, ORIGINAL_SIZE_KEY, TRUNCATED_MARKER_KEY, isTruncatedProperties } from "../../lib/checkpoint/properties.ts";
import { VERSION_RECORD_FIELDS } from "../../lib/model/version-record.ts";
import type { VersionRecord } from "../../lib/model/version-record.ts";
import { versionRecord } from "./records.ts";

function content(overrides: Partial<CheckpointContent> = {}): CheckpointContent {
  return {
    version: 3,
    records: [
      versionRecord(1, { is_cleaned_up: true, read_version: null, transaction_uuid: null }),
      versionRecord(2, { is_tagged: true, transaction_properties: { "lance.commit_message": "hello", a: "ü" } }),
      versionRecord(3, { operation_type: null }),
    ],
    createdAtMillis: 1_770_000_000_123,
    datasetCreatedAtMillis: 1_760_000_060_000,
    archiveSegments: [],
    datasetCreatedFromVersion: 1,
    tableFormat: "lance",
    ...overrides,
  };
}

describe("checkpoint codec", () => {
  it("round-trips every column, nulls, flags and file metadata", () => {
    const original = content();
    expect(decodeCheckpoint(encodeCheckpoint(original), "mem://cp")).toEqual(original);
  });

  it("round-trips every shape of parent_ids and metrics (common ones are decoded without JSON.parse)", () => {
    const shapes: Partial<VersionRecord>[] = [
      { parent_ids: [], metrics: {} },
      { parent_ids: ["7"], metrics: {} },
      { parent_ids: ["007"], metrics: { numFiles: 3 } },
      { parent_ids: ["a", "b"], metrics: { 'x"y': 1.5 } },
      { parent_ids: ["snap-1"], metrics: {} },
      { parent_ids: ["9007199254740993"], metrics: {} },
    ];
    const content: CheckpointContent = {
      version: shapes.length,
      records: shapes.map((shape, i) => versionRecord(i + 1, shape)),
      createdAtMillis: 1,
      datasetCreatedAtMillis: null,
      datasetCreatedFromVersion: null,
      tableFormat: "iceberg",
      archiveSegments: [],
    };
    expect(decodeCheckpoint(encodeCheckpoint(content), "mem://c").records).toEqual(content.records);
  });

  it("is a plain Arrow IPC file with the documented schema and metadata", () => {
    const bytes = encodeCheckpoint(content());
    expect(new TextDecoder().decode(bytes.subarray(0, 6))).toBe("ARROW1");
    const table = tableFromIPC(bytes);
    expect(table.schema.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
      ["version", "Int64", false],
      ["timestamp_millis", "Int64", false],
      ["total_fragments", "Int64", true],
      ["total_data_files", "Int64", true],
      ["total_files_size", "Int64", true],
      ["total_deletion_files", "Int64", true],
      ["total_data_file_rows", "Int64", true],
      ["total_deletion_file_rows", "Int64", true],
      ["total_rows", "Int64", true],
      ["is_tagged", "Bool", false],
      ["is_cleaned_up", "Bool", false],
      ["transaction_uuid", "Utf8", true],
      ["read_version", "Int64", true],
      ["operation_type", "Utf8", true],
      ["transaction_properties", "Utf8", false],
      ["version_id", "Utf8", false],
      ["parent_ids", "Utf8", false],
      ["branch", "Utf8", true],
      ["metrics", "Utf8", false],
    ]);
    expect(table.schema.fields.map((f) => f.name)).toEqual([...VERSION_RECORD_FIELDS]);
    expect(Object.fromEntries(table.schema.metadata)).toEqual({
      "lakewarden.checkpoint.format_version": "2",
      "lakewarden.checkpoint.version": "3",
      "lakewarden.checkpoint.created_at_millis": "1770000000123",
      "lakewarden.dataset.created_at_millis": "1760000060000",
      "lakewarden.dataset.created_from_version": "1",
      "lakewarden.table_format": "lance",
    });
    const rows = table.toArray().map((row) => row.toJSON());
    expect(rows[1]).toMatchObject({ version: 2n, is_tagged: true, is_cleaned_up: false });
    expect(JSON.parse(rows[1].transaction_properties)).toEqual({ "lance.commit_message": "hello", a: "ü" });
    expect(rows[0]).toMatchObject({ read_version: null, transaction_uuid: null, is_cleaned_up: true });
  });

  it("truncates transaction properties over 10 KB into a wrapper recording the original size", () => {
    const big = { payload: "x".repeat(MAX_TRANSACTION_PROPERTIES_BYTES) };
    const small = { payload: "y".repeat(100) };
    const decoded = decodeCheckpoint(
      encodeCheckpoint(content({ records: [versionRecord(1, { transaction_properties: big }), versionRecord(2, { transaction_properties: small })], version: 2 })),
      "mem://cp",
    );
    const wrapped = decoded.records[0]!.transaction_properties;
    expect(isTruncatedProperties(wrapped)).toBe(true);
    expect(wrapped[TRUNCATED_MARKER_KEY]).toBe("true");
    expect(Number(wrapped[ORIGINAL_SIZE_KEY])).toBe(JSON.stringify(big).length);
    expect(JSON.stringify(wrapped).length).toBeLessThan(2048);
    expect(decoded.records[1]!.transaction_properties).toEqual(small);
    // Stable: encoding the wrapper again keeps it as it is.
    const again = decodeCheckpoint(encodeCheckpoint({ ...decoded }), "mem://cp");
    expect(again.records[0]!.transaction_properties).toEqual(wrapped);
  });

  it("holds an empty history", () => {
    const empty = content({ records: [], version: 0, datasetCreatedAtMillis: null, datasetCreatedFromVersion: null });
    expect(decodeCheckpoint(encodeCheckpoint(empty), "mem://cp")).toEqual(empty);
  });

  it("refuses truncated, garbage and inconsistent files with an error naming the file", () => {
    const bytes = encodeCheckpoint(content());
    const uri = "file:///t.lance/_lakewarden/checkpoints/00000000000000000003.arrow";
    expect(() => decodeCheckpoint(bytes.subarray(0, bytes.length - 40), uri)).toThrow(CorruptCheckpointError);
    expect(() => decodeCheckpoint(bytes.subarray(0, bytes.length - 40), uri)).toThrow(uri);
    expect(() => decodeCheckpoint(new TextEncoder().encode("not arrow at all"), uri)).toThrow(/not an Arrow IPC file/);
    const corruptMiddle = Uint8Array.from(bytes);
    corruptMiddle.fill(0xff, 8, bytes.length - 8);
    expect(() => decodeCheckpoint(corruptMiddle, uri)).toThrow(CorruptCheckpointError);
    expect(() => encodeCheckpoint(content({ records: [versionRecord(2), versionRecord(1)] }))).toThrow(/ascending/);
    const tooNew = encodeCheckpoint(content({ version: 2 }));
    expect(() => decodeCheckpoint(tooNew, uri)).toThrow(/newer than the 2 it claims/);
  });

  it("names files by the zero-padded version they cover", () => {
    expect(checkpointKey(42)).toBe("_lakewarden/checkpoints/00000000000000000042.arrow");
    expect(parseCheckpointKey(checkpointKey(42))).toBe(42);
    expect(parseCheckpointKey("_lakewarden/checkpoints/42.arrow")).toBeNull();
    expect(parseCheckpointKey("_lakewarden/checkpoints/00000000000000000042.arrow.tmp")).toBeNull();
  });
});
