/**
 * The seven per-version totals, computed exactly as Lance computes `Version.metadata`
 * (`Manifest::summary()` in rust/lance-table/src/format/manifest.rs), which is what
 * LanceDB's `listVersions()` reports. Note the quirks we keep on purpose, to match:
 * - a fragment's rows count only when known: physical_rows set, and, if it has a
 *   deletion file, that file's deleted-row count set (0 means unknown);
 * - total_data_file_rows is total_rows + total_deletion_file_rows, not the sum of
 *   physical rows, so fragments with unknown counts drop out of both.
 */
import type { VersionTotals } from "../../model/version-record.ts";
import type { LanceManifest } from "./manifest-model.ts";

export function summarizeManifest(manifest: LanceManifest): VersionTotals {
  let totalDataFiles = 0;
  let totalFilesSize = 0;
  let totalDeletionFiles = 0;
  let totalDeletionFileRows = 0;
  let totalRows = 0;
  for (const fragment of manifest.fragments) {
    totalDataFiles += fragment.files.length;
    for (const file of fragment.files) totalFilesSize += file.sizeBytes;
    const deletion = fragment.deletionFile;
    if (deletion) {
      totalDeletionFiles += 1;
      totalDeletionFileRows += deletion.numDeletedRows ?? 0;
    }
    if (fragment.physicalRows !== null) {
      if (!deletion) totalRows += fragment.physicalRows;
      else if (deletion.numDeletedRows !== null) totalRows += fragment.physicalRows - deletion.numDeletedRows;
    }
  }
  return {
    total_fragments: manifest.fragments.length,
    total_data_files: totalDataFiles,
    total_files_size: totalFilesSize,
    total_deletion_files: totalDeletionFiles,
    total_data_file_rows: totalRows + totalDeletionFileRows,
    total_deletion_file_rows: totalDeletionFileRows,
    total_rows: totalRows,
  };
}
