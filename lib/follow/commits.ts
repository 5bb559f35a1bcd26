/**
 * From "an object was created at this key" to "table T has version N", and from a burst of
 * such commits to one piece of work per table. Shared by the on-commit Lambda (keys from S3
 * events) and `lakewarden serve` (paths from file watching and polling), so both react to
 * exactly the same keys.
 */
import { TABLE_FORMATS } from "../formats/index.ts";
import type { TableFormat } from "../formats/table-format.ts";

export interface CommitKey {
  /** The format whose commit file the key is. */
  format: TableFormat;
  /** The table's root, relative to where the key is (""= the key's root is itself a table). */
  tableRoot: string;
  /** The version the commit file is; null when it holds several (an Iceberg metadata file): the latest then. */
  version: number | null;
  /** The version file's key relative to the table root (`_versions/5.manifest`). */
  versionKey: string;
}

/**
 * The format, table and version a key names, or null for any key that is not a version file
 * of one of `formats` (data files, staging manifests, `.manifest` files elsewhere). Each
 * format says which keys are its commit files; the first that claims the key wins.
 */
export function parseCommitKey(key: string, formats: readonly TableFormat[] = TABLE_FORMATS): CommitKey | null {
  for (const format of formats) {
    const tableRoot = format.tableRootOfCommitKey(key);
    if (tableRoot === null) continue;
    const versionKey = tableRoot === "" ? key : key.slice(tableRoot.length + 1);
    // Formats whose commit file names one version say which; a metadata file holding many says none.
    const version = format.parseVersionKey(versionKey);
    if (version !== null || format.removal === "metadata-commit") return { format, tableRoot, version, versionKey };
  }
  return null;
}

export interface Commit<Source> {
  /** Identifies the table (a URI or a root path); commits group by exact equality. */
  table: string;
  /** null: "a new version, the latest" (a commit file that names no single version). */
  version: number | null;
  /** When the version file was written, for the commit-to-head lag. */
  committedAt?: Date;
  /** What reported it (an SQS message id, a file event): failures are reported per source. */
  source: Source;
  /** The format whose commit file it was, when known. */
  format?: TableFormat;
}

export interface TableCommits<Source> {
  table: string;
  /** The format of the table's commits, when known. */
  format?: TableFormat;
  /** The newest version seen for the table: the only one whose head is worth writing (null: the latest). */
  newestVersion: number | null;
  /** Commit time of that newest version, when known. */
  newestCommittedAt?: Date;
  /** Every source that mentioned the table, once each, in first-seen order. */
  sources: Source[];
}

/**
 * Groups commits by table. Duplicates and any arrival order give the same result, which is
 * what makes at-least-once, unordered delivery harmless.
 */
export function groupCommitsByTable<Source>(commits: Iterable<Commit<Source>>): TableCommits<Source>[] {
  const groups = new Map<string, TableCommits<Source>>();
  for (const commit of commits) {
    let group = groups.get(commit.table);
    if (group === undefined) {
      group = { table: commit.table, newestVersion: commit.version, newestCommittedAt: commit.committedAt, sources: [] };
      if (commit.format) group.format = commit.format;
      groups.set(commit.table, group);
    } else if (group.newestVersion === null) {
      // Already "the latest": nothing is newer.
    } else if (commit.version === null || commit.version > group.newestVersion) {
      group.newestVersion = commit.version;
      group.newestCommittedAt = commit.committedAt;
    } else if (commit.version === group.newestVersion && group.newestCommittedAt === undefined) {
      group.newestCommittedAt = commit.committedAt;
    }
    if (!group.sources.includes(commit.source)) group.sources.push(commit.source);
  }
  return [...groups.values()];
}
