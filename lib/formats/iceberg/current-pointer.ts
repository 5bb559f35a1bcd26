/**
 * Whether a metadata file a catalog or the user names as current (`--metadata-location`, Glue's
 * `metadata_location`) is really the table's newest: a pointer read a moment before a commit, or
 * typed from an old listing, names a file another one supersedes, and cleaning by it deletes every
 * file only the newer metadata reaches, the current snapshot's among them.
 *
 * Evidence that a newer file exists (any one is enough):
 *   - a `v<M>` file with M above the pointer's `v<N>` (a file-system commit is a create-only write:
 *     the file existing is the commit);
 *   - the version hint holds a higher number than the pointer's `v<N>`;
 *   - a metadata file (any name) whose metadata-log names the pointer: it was written on top of it.
 *     For catalog-named files (`NNNNN-uuid`) a higher number alone is not enough: a commit the
 *     catalog refused, or never heard back from, leaves such a file too; one written on top of the
 *     pointer (its log names it) may be the commit the catalog took a moment ago, so it counts.
 * Files the pointer's own metadata-log names are older, and a file of a lower sequence in the same
 * naming is too: neither is read. Any other file is read once, to look at its metadata-log; one that
 * does not decode is no table state anyone reads, and is not evidence.
 */
import type { ObjectStore } from "../../store/object-store.ts";
import { NotFoundError } from "../../store/errors.ts";
import { CorruptFileError } from "../errors.ts";
import { listAllMetadataFiles, readMetadataFile, readVersionHint, type MetadataFileInfo } from "./metadata-files.ts";
import type { MetadataFileName } from "./metadata-names.ts";
import type { IcebergTable } from "./table-state.ts";
import { icebergPathResolver, type IcebergPathResolver } from "./table-paths.ts";

export interface Superseded {
  /** The newer metadata file (or, for the hint, the file it names). */
  newer: string;
  /** Why, in a few words. */
  why: string;
}

const READ_CONCURRENCY = 8;

/** What supersedes the table's metadata file (`table.metadataKey`), or null when nothing does. */
export async function supersededBy(store: ObjectStore, table: IcebergTable): Promise<Superseded | null> {
  const pointer = table.metadataKey;
  const name = table.read.file.name;
  const [files, hint] = await Promise.all([listAllMetadataFiles(store), readVersionHint(store)]);
  const older = loggedKeys(table.read.metadata.metadataLog, table.resolve);

  const higher = files
    .filter((f) => f.key !== pointer && name.naming === "hadoop" && sameNaming(f.name, name) && f.name.sequence! > name.sequence!)
    .sort((a, b) => b.name.sequence! - a.name.sequence!)[0];
  if (higher) return { newer: higher.key, why: `a higher sequence (${higher.name.sequence} > ${name.sequence})` };

  if (name.naming === "hadoop" && hint?.sequence != null && hint.sequence > name.sequence) {
    return { newer: `metadata/v${hint.sequence}.metadata.json`, why: `the version hint holds ${hint.sequence}, above the pointer's ${name.sequence}` };
  }

  const unknown = files.filter((f) => f.key !== pointer && !older.has(f.key) && !(sameNaming(f.name, name) && f.name.sequence! < name.sequence!));
  for (let at = 0; at < unknown.length; at += READ_CONCURRENCY) {
    const found = await Promise.all(unknown.slice(at, at + READ_CONCURRENCY).map((file) => namesInLog(store, file, pointer)));
    const newer = found.find((f): f is MetadataFileInfo => f !== null);
    if (newer) return { newer: newer.key, why: "its metadata-log names the pointer" };
  }
  return null;
}

function sameNaming(a: MetadataFileName, b: MetadataFileName): boolean {
  return a.naming !== "other" && a.naming === b.naming;
}

function loggedKeys(log: readonly { file: string }[], resolve: IcebergPathResolver): Set<string> {
  const keys = new Set<string>();
  for (const entry of log) {
    const resolved = resolve(entry.file);
    if (resolved.kind === "key") keys.add(resolved.key);
  }
  return keys;
}

/** `file` when its metadata-log names `pointer`, else null (also when it is not readable table metadata, or gone). */
async function namesInLog(store: ObjectStore, file: MetadataFileInfo, pointer: string): Promise<MetadataFileInfo | null> {
  try {
    const read = await readMetadataFile(store, file.key);
    return loggedKeys(read.metadata.metadataLog, icebergPathResolver(read.metadata.location, store.uri)).has(pointer) ? file : null;
  } catch (error) {
    if (error instanceof CorruptFileError || error instanceof NotFoundError) return null;
    throw error;
  }
}
