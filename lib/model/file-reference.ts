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

/**
 * A version's references as runs of shared chunks, for a format whose consecutive versions name
 * mostly the same files (Lance: a chunk per fragment): the first `count` chunks of `chunks`, each
 * chunk's references in order, then `extra`. `chunks` may be shared with other versions of the
 * same read and grow at its end (by other versions), but its first `count` entries never change:
 * so a reader that met `chunks` before knows the ids of a prefix without walking it, and no flat
 * list is made per version (at 100,000 fragments an 800 KB array each, which only a full
 * collection frees: scale-cleanup.md).
 */
export interface ReferenceSequence {
  chunks: readonly { readonly references: readonly FileReference[] }[];
  count: number;
  extra: readonly FileReference[];
}
