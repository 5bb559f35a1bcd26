/**
 * Iceberg refs (spec "Snapshot References") as the model's tags and branches. `main` is the
 * table's current lineage and is not listed as a branch (the model's branches are the others);
 * its retention settings are the table's (see retention.ts). A ref naming a snapshot that the
 * metadata no longer holds is left out: no version carries it.
 */
import type { Branch, RefRetention, Refs, Tag } from "../../model/refs.ts";
import type { IcebergRef, IcebergTableMetadata } from "./table-metadata.ts";
import type { OrderedSnapshots } from "./versions.ts";

function retentionOf(ref: IcebergRef): RefRetention {
  return { maxRefAgeMs: ref.maxRefAgeMs, maxSnapshotAgeMs: ref.maxSnapshotAgeMs, minSnapshotsToKeep: ref.minSnapshotsToKeep };
}

export function icebergRefs(metadata: IcebergTableMetadata, ordered: OrderedSnapshots): Refs {
  const tags: Tag[] = [];
  const branches: Branch[] = [];
  for (const ref of [...metadata.refs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const version = ordered.versionOf.get(ref.snapshotId);
    if (version === undefined) continue;
    if (ref.type === "tag") {
      // An Iceberg tag pins its snapshot whatever lineage it is on: branch null (the table's own), so cleanup keeps it.
      tags.push({ name: ref.name, version, versionId: ref.snapshotId, branch: null, retention: retentionOf(ref) });
    } else if (ref.name !== "main") {
      branches.push({ name: ref.name, parentBranch: null, parentVersion: version, parentVersionId: ref.snapshotId, retention: retentionOf(ref) });
    }
  }
  return { tags, branches };
}
