/**
 * A Lance version's fragments as a scan planner sees them (lib/formats/scan-files.ts): every
 * fragment with its data files and deletion file. The manifest keeps no per-fragment column
 * statistics, so no fact is given and no fragment is ever pruned.
 */
import type { ScanColumn, ScanDataFile, ScanDeleteFile, ScanFiles } from "../scan-files.ts";
import type { TableSnapshot } from "../table-format.ts";

export function lanceScanFiles(snapshot: TableSnapshot): ScanFiles {
  const columns: ScanColumn[] = snapshot.schema.filter((f) => f.parentId === -1).map((f) => ({ name: f.name, type: "other", formatType: f.logicalType }));
  const deleteFiles: ScanDeleteFile[] = [];
  const dataFiles: ScanDataFile[] = snapshot.liveFiles.map((f) => {
    const deletes: number[] = [];
    if (f.deletionFile) {
      deletes.push(deleteFiles.length);
      deleteFiles.push({
        path: f.deletionFile,
        kind: "deletion-vector",
        rows: f.deletedRows,
        size: null,
        storage: f.deletionFile.endsWith(".bin") ? "lance bitmap" : "lance arrow",
      });
    }
    return { paths: f.paths, fileFormat: "lance", size: f.size, rows: f.physicalRows, facts: [], deletes, partition: "" };
  });
  return { columns, dataFiles, deleteFiles };
}
