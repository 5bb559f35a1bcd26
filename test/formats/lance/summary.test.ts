/**
 * The seven totals follow Lance's Manifest::summary() exactly, including how it treats
 * unknown counts (the real-table comparisons live in test/versions/).
 */
import { describe, expect, it } from "vitest";
import type { LanceFragment, LanceManifest } from "../../../lib/formats/lance/manifest-model.ts";
import { summarizeManifest } from "../../../lib/formats/lance/summary.ts";
import { toSafeNumber } from "../../../lib/formats/lance/safe-integer.ts";
import { CorruptFileError } from "../../../lib/formats/errors.ts";

function manifestOf(fragments: LanceFragment[]): LanceManifest {
  return {
    version: 1,
    timestampNanos: 0n,
    fields: [],
    fragments,
    indices: [],
    transactionFile: null,
    readerFeatureFlags: 0n,
    writerFeatureFlags: 0n,
    config: {},
    tableMetadata: {},
    branch: null,
    basePaths: [],
    maxFragmentId: null,
    nextRowId: 0n,
    writerVersion: null,
    dataFormat: null,
  };
}

const file = (sizeBytes: number) => ({ path: "f.lance", sizeBytes, baseId: null, fileMajorVersion: 2, fileMinorVersion: 0 });
const deletion = (numDeletedRows: number | null) => ({ suffix: "arrow" as const, readVersion: 1n, id: 2n, numDeletedRows, baseId: null });

describe("summarizeManifest", () => {
  it("sums fragments, files, sizes, deletions and rows", () => {
    const summary = summarizeManifest(
      manifestOf([
        { id: 0, files: [file(100), file(50)], deletionFile: deletion(3), physicalRows: 10 },
        { id: 1, files: [file(0)], deletionFile: null, physicalRows: 7 },
      ]),
    );
    expect(summary).toEqual({
      total_fragments: 2,
      total_data_files: 3,
      total_files_size: 150,
      total_deletion_files: 1,
      total_data_file_rows: 17,
      total_deletion_file_rows: 3,
      total_rows: 14,
    });
  });

  it("drops fragments with unknown counts from the row totals, as Lance does", () => {
    const summary = summarizeManifest(
      manifestOf([
        // Deleted-row count unknown: the fragment's rows are unknown.
        { id: 0, files: [file(10)], deletionFile: deletion(null), physicalRows: 10 },
        // Physical rows unknown (legacy): its deletions still count.
        { id: 1, files: [file(10)], deletionFile: deletion(2), physicalRows: null },
        { id: 2, files: [file(10)], deletionFile: null, physicalRows: 5 },
      ]),
    );
    expect(summary).toMatchObject({
      total_deletion_files: 2,
      total_deletion_file_rows: 2,
      total_rows: 5,
      total_data_file_rows: 7,
    });
  });

  it("summarises an empty table", () => {
    expect(Object.values(summarizeManifest(manifestOf([])))).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});

describe("toSafeNumber", () => {
  it("converts safe 64-bit values and refuses the rest, naming the object and field", () => {
    expect(toSafeNumber("9007199254740991", "x", "s3://b/m")).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => toSafeNumber("9007199254740992", "fragment 3 physical_rows", "s3://b/m")).toThrow(CorruptFileError);
    expect(() => toSafeNumber(2n ** 64n - 1n, "fragment 3 physical_rows", "s3://b/m")).toThrow(
      "s3://b/m: fragment 3 physical_rows 18446744073709551615 is beyond the safe integer range (2^53 - 1)",
    );
  });
});
