/**
 * The per-version summaries of a table, read from its version files: what
 * `lakewarden versions` prints and what checkpoints archive. This reads live files only;
 * the timeline (checkpoint + head + newer manifests) is built on top of it.
 */
import type { ObjectStore } from "../store/object-store.ts";
import type { Refs, TableFormat, VersionFile } from "../formats/table-format.ts";
import { noVersionFilesError } from "../formats/errors.ts";
import type { VersionRecord } from "../model/version-record.ts";

/** Manifest reads in flight at once: enough to hide S3 latency, few enough to be polite. */
export const DEFAULT_READ_CONCURRENCY = 16;

export interface ReadVersionRecordsOptions {
  /** Parallel version-file reads (default DEFAULT_READ_CONCURRENCY). */
  concurrency?: number;
  /** Version files already listed; saves the LIST. */
  versionFiles?: readonly VersionFile[];
  /** Refs already read; saves reading `_refs/`. */
  refs?: Refs;
  /** Only versions at or above this one (e.g. those newer than a checkpoint). */
  fromVersion?: number;
}

export { mainBranchTaggedVersions } from "../model/refs.ts";
import { mainBranchTaggedVersions } from "../model/refs.ts";

/**
 * One VersionRecord per version file, ascending by version. `is_tagged` comes from the
 * main branch's tags; `is_cleaned_up` is false (every record here has a live file).
 * NotATableError when the table has no version files at all (and `fromVersion` is unset).
 */
export async function readVersionRecords(store: ObjectStore, format: TableFormat, options: ReadVersionRecordsOptions = {}): Promise<VersionRecord[]> {
  const [listed, refs] = await Promise.all([options.versionFiles ?? format.listVersionFiles(store), options.refs ?? format.readRefs(store)]);
  if (listed.length === 0 && options.fromVersion === undefined) {
    throw noVersionFilesError(store.uri, format);
  }
  const fromVersion = options.fromVersion ?? 0;
  const files = listed.filter((file) => file.version >= fromVersion).sort((a, b) => a.version - b.version);
  const tagged = mainBranchTaggedVersions(refs);
  const concurrency = options.concurrency ?? DEFAULT_READ_CONCURRENCY;
  const records = await format.readRecords(store, files, { concurrency });
  return records.map((record) => ({ ...record, is_tagged: tagged.has(record.version) }));
}
