/**
 * A file a version needs, format-neutral: a key relative to the table root, the role the file
 * plays, and its size where the format records it. A reference whose key ends in "/" is a
 * folder (Lance index folders): every key inside it is covered.
 */

/** The roles the formats use today; a format may name another (the type stays open on purpose). */
export const FILE_ROLES = ["commit", "checkpoint", "metadata", "data", "delete", "index", "change-data", "statistics", "sidecar", "transaction"] as const;

export type KnownFileRole = (typeof FILE_ROLES)[number];
export type FileRole = KnownFileRole | (string & {});

export interface FileReference {
  /** Key relative to the table root, already resolved and validated (see table-path.ts). */
  path: string;
  role: FileRole;
  /** Bytes, when the format records it (undefined = unknown). */
  size?: number;
}
